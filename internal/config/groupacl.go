package config

import (
	"fmt"

	"github.com/iggygw/iggy-gateway-kafka/internal/groupacl"
)

// buildGroupACL reads the consumer group ACLs. They apply to identified principals only (SASL
// listeners, SSL listeners with client certificates): set without such a listener they would
// protect nothing, and an operator who wrote them believes groups are protected.
func (c *Config) buildGroupACL(explicit map[string]bool) error {
	identified := false
	for _, l := range c.Listeners {
		identified = identified || l.SASL() || c.ClientCertificates(l)
	}
	if !identified {
		for _, name := range []string{"GROUP_ACL_PATH", "GROUP_ACL_DEFAULT"} {
			if explicit[name] {
				return fmt.Errorf("%s%s only applies to identified principals: add a SASL listener or client certificates (%sTLS_CLIENT_AUTH)", EnvPrefix, name, EnvPrefix)
			}
		}
	}
	var bindings []groupacl.Binding
	if c.GroupACLPath != "" {
		var err error
		if bindings, err = groupacl.Load(c.GroupACLPath); err != nil {
			return fmt.Errorf("%sGROUP_ACL_PATH: %w", EnvPrefix, err)
		}
	}
	p, err := groupacl.NewPolicy(groupacl.Default(c.GroupACLDefault), bindings)
	if err != nil {
		return fmt.Errorf("%sGROUP_ACL_DEFAULT: %w", EnvPrefix, err)
	}
	c.GroupACL = p
	if p.Fallback() == groupacl.Topics || p.Fallback() == groupacl.AllowAll {
		c.Warnings = append(c.Warnings, fmt.Sprintf("%sGROUP_ACL_DEFAULT=%s: consumer groups are no tenant boundary (any identified principal may take or join another's group; docs/SECURITY.md)", EnvPrefix, p.Fallback()))
	}
	return nil
}
