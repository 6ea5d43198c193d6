# Sourced by .ci/run before anything reaches the npm registry.
#
# Node verifies TLS against the CA list built into it, not the machine's store. On a network whose HTTPS goes
# through an inspecting proxy (this machine's: Node alone says SELF_SIGNED_CERT_IN_CHAIN for
# registry.npmjs.org), every npm request then fails: npm retries each and falls back to its cache, so a fresh
# clone's install took 3 min instead of 52 s, and with an empty cache it fails outright. The machine's store,
# which curl and apt already trust, is added to Node's (NODE_EXTRA_CA_CERTS adds, it does not replace; Node 20's
# npm, which bootstraps Node 22, reads it too). A value already set is kept.
if [ -z "${NODE_EXTRA_CA_CERTS:-}" ]; then
  for bundle in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do
    if [ -f "$bundle" ]; then
      export NODE_EXTRA_CA_CERTS="$bundle"
      break
    fi
  done
fi
