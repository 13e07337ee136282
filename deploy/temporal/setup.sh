#!/bin/sh
# One-shot job of the compose deployment (service temporal-setup, image temporalio/admin-tools):
# waits until the Temporal server serves, then creates Vigil's namespace and registers Vigil's
# search attributes in it. Idempotent: a namespace or attribute that exists is left as it is, so
# it runs on every `docker compose up`.
# Environment: TEMPORAL_ADDRESS (the frontend, host:port), VIGIL_NAMESPACE, VIGIL_NAMESPACE_RETENTION
# (how long closed runs stay visible, e.g. 720h), VIGIL_SEARCH_ATTRIBUTES (space-separated
# Name=Type pairs, the ones of schemas/search-attributes.ts).
set -eu

: "${TEMPORAL_ADDRESS:?}" "${VIGIL_NAMESPACE:?}" "${VIGIL_NAMESPACE_RETENTION:?}" "${VIGIL_SEARCH_ATTRIBUTES:?}"
ns=$VIGIL_NAMESPACE

t() {
  temporal "$@" --address "$TEMPORAL_ADDRESS"
}

# Runs a step until it succeeds, for at most about two minutes: the server may still be starting,
# and a namespace just created takes a few seconds to be known to every part of the server.
retry() {
  attempt=1
  until "$@"; do
    if [ "$attempt" -ge 60 ]; then
      echo "temporal-setup: giving up after $attempt attempts: $*" >&2
      return 1
    fi
    attempt=$((attempt + 1))
    sleep 2
  done
}

ensure_namespace() {
  if t operator namespace describe --namespace "$ns" >/dev/null 2>&1; then
    echo "temporal-setup: namespace $ns exists"
  else
    t operator namespace create --namespace "$ns" --retention "$VIGIL_NAMESPACE_RETENTION"
  fi
}

# ensure_search_attribute NAME TYPE
ensure_search_attribute() {
  existing=$(t operator search-attribute list --namespace "$ns" --output json) || return 1
  if printf '%s' "$existing" | grep -q "\"$1\""; then
    echo "temporal-setup: search attribute $1 exists"
  else
    t operator search-attribute create --namespace "$ns" --name "$1" --type "$2"
  fi
}

retry t operator cluster health
retry ensure_namespace
for pair in $VIGIL_SEARCH_ATTRIBUTES; do
  retry ensure_search_attribute "${pair%%=*}" "${pair#*=}"
done
echo "temporal-setup: namespace $ns ready with search attributes $VIGIL_SEARCH_ATTRIBUTES"
