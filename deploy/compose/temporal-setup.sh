#!/bin/sh
# compose.yaml's temporal-setup job: once the Temporal server answers, creates Lifeline's namespace and
# registers the search attributes Lifeline's workflows set (workflows/contract.ts, SEARCH_ATTRIBUTE_KEYS; a
# test keeps this list equal to it and runs this script against a Temporal dev server). Safe to run on every
# `up`: what exists is left as it is.
set -eu
address=${TEMPORAL_ADDRESS:?}
namespace=${LIFELINE_NAMESPACE:?}
retention=${LIFELINE_NAMESPACE_RETENTION:-720h}
SEARCH_ATTRIBUTES="LifelineCode LifelineSite LifelinePostId LifelineKind"

# Runs "$@" until it succeeds, 60 times at most, 2 s apart: the server starts, and a new namespace reaches its
# caches, some seconds after it says so.
retry() {
  tries=0
  until "$@"; do
    tries=$((tries + 1))
    [ "$tries" -ge 60 ] && { echo "gave up: $*" >&2; return 1; }
    sleep 2
  done
}

retry temporal operator cluster health --address "$address" >/dev/null

if ! temporal operator namespace describe --address "$address" -n "$namespace" >/dev/null 2>&1; then
  retry temporal operator namespace create --address "$address" -n "$namespace" --retention "$retention"
fi

has_attribute() {
  temporal operator search-attribute list --address "$address" -n "$namespace" 2>/dev/null | grep -qw "$1"
}
for name in $SEARCH_ATTRIBUTES; do
  if has_attribute "$name"; then
    echo "search attribute $name exists"
  else
    retry temporal operator search-attribute create --address "$address" -n "$namespace" --name "$name" --type Keyword
  fi
done
echo "Temporal namespace $namespace is ready"
