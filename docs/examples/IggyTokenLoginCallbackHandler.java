/*
 * A login callback handler for Kafka's Java client that authenticates to iggy-gateway-kafka
 * with SASL OAUTHBEARER and an Iggy personal access token (docs/SECURITY.md).
 *
 * Kafka's own OAUTHBEARER login handlers make or fetch JSON Web Tokens; a personal access
 * token is an opaque string, which this handler hands to the client as the bearer token. The
 * gateway logs in to Iggy with it, so the session acts as the token's owner and ends no later
 * than the token expires. Compile it against the kafka-clients jar of your application and
 * put the class on its classpath:
 *
 *   javac -cp kafka-clients-<version>.jar -d classes IggyTokenLoginCallbackHandler.java
 *
 * and configure the client with
 *
 *   security.protocol=SASL_SSL              (or SASL_PLAINTEXT)
 *   sasl.mechanism=OAUTHBEARER
 *   sasl.login.callback.handler.class=IggyTokenLoginCallbackHandler
 *   sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required \
 *       token="<the personal access token>" lifetimeSeconds="3600";
 *
 * lifetimeSeconds (default 3600) is how long the client treats one login as fresh: it logs in
 * again (with the same token) after about 80% of it. It does not extend the token: when Iggy
 * expires or deletes the token, the gateway refuses the next authentication. The test suite
 * compiles and runs this file (internal/e2e, TestSecurityJavaOAuthBearer).
 */

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

import javax.security.auth.callback.Callback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.auth.login.AppConfigurationEntry;

import org.apache.kafka.common.security.auth.AuthenticateCallbackHandler;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerToken;
import org.apache.kafka.common.security.oauthbearer.OAuthBearerTokenCallback;

public class IggyTokenLoginCallbackHandler implements AuthenticateCallbackHandler {
    private String token;
    private long lifetimeMs;

    @Override
    public void configure(Map<String, ?> configs, String saslMechanism, List<AppConfigurationEntry> jaasConfigEntries) {
        if (!OAuthBearerLoginModule.OAUTHBEARER_MECHANISM.equals(saslMechanism)) {
            throw new IllegalArgumentException("IggyTokenLoginCallbackHandler serves OAUTHBEARER, not " + saslMechanism);
        }
        if (jaasConfigEntries.size() != 1) {
            throw new IllegalArgumentException("expected one JAAS login module entry, got " + jaasConfigEntries.size());
        }
        Map<String, ?> options = jaasConfigEntries.get(0).getOptions();
        Object value = options.get("token");
        if (!(value instanceof String) || ((String) value).isEmpty()) {
            throw new IllegalArgumentException("sasl.jaas.config needs token=\"<Iggy personal access token>\"");
        }
        token = (String) value;
        Object lifetime = options.get("lifetimeSeconds");
        lifetimeMs = 1000L * (lifetime == null ? 3600L : Long.parseLong((String) lifetime));
        if (lifetimeMs <= 0) {
            throw new IllegalArgumentException("lifetimeSeconds must be positive");
        }
    }

    @Override
    public void handle(Callback[] callbacks) throws UnsupportedCallbackException {
        for (Callback callback : callbacks) {
            if (!(callback instanceof OAuthBearerTokenCallback)) {
                throw new UnsupportedCallbackException(callback);
            }
            final long now = System.currentTimeMillis();
            final String value = token;
            final long expires = now + lifetimeMs;
            ((OAuthBearerTokenCallback) callback).token(new OAuthBearerToken() {
                @Override
                public String value() {
                    return value;
                }

                @Override
                public Set<String> scope() {
                    return Collections.emptySet();
                }

                @Override
                public long lifetimeMs() {
                    return expires;
                }

                @Override
                public String principalName() {
                    // Only the client's own logs show it: the gateway names the session after
                    // the token's owner in Iggy.
                    return "iggy-personal-access-token";
                }

                @Override
                public Long startTimeMs() {
                    return now;
                }
            });
        }
    }

    @Override
    public void close() {
    }
}
