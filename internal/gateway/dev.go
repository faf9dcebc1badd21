package gateway

import (
	"fmt"

	"github.com/iggygw/iggy-gateway-kafka/internal/iggy/memserver"
)

// devCredentials are the root account of the dev-mode Iggy server (config sets the bridge to
// use the same).
const devCredentials = "iggy"

// startDev starts the in-memory Iggy server of dev mode and points the bridge at it.
func (g *Gateway) startDev() error {
	srv, err := memserver.Start(memserver.Config{
		Addr: g.cfg.DevIggyAddr, RootUsername: devCredentials, RootPassword: devCredentials,
		Logger: g.log.With("component", "memserver"),
	})
	if err != nil {
		return fmt.Errorf("dev mode: starting the in-memory Iggy server on %s: %w (set IGGY_KAFKA_DEV_IGGY_ADDR to another address)", g.cfg.DevIggyAddr, err)
	}
	g.dev = srv
	g.cfg.Bridge.Addr = srv.Addr()
	g.log.Warn("DEV MODE: data lives in memory only and is lost when the gateway stops; never use it in production")
	g.log.Warn("DEV MODE: in-memory Iggy server for native Iggy clients",
		"iggy_addr", srv.Addr(), "credentials", devCredentials+"/"+devCredentials)
	return nil
}
