#!/bin/sh
# compose.yaml's temporal-setup job: once the Temporal server answers, creates Lifeline's namespace and
# registers the search attributes Lifeline's workflows set (workflows/contract.ts, SEARCH_ATTRIBUTE_KEYS; a
# test keeps this list equal to it). Safe to run on every `up`: what exists is left as it is.
set -eu
address=${TEMPORAL_ADDRESS:?}
namespace=${LIFELINE_NAMESPACE:?}
retention=${LIFELINE_NAMESPACE_RETENTION:-30d}
SEARCH_ATTRIBUTES="LifelineCode LifelineSite LifelinePostId LifelineKind"

tries=0
until temporal operator cluster health --address "$address" >/dev/null 2>&1; do
  tries=$((tries + 1))
  [ "$tries" -ge 60 ] && { echo "Temporal at $address did not become healthy"; exit 1; }
  sleep 2
done

if ! temporal operator namespace describe --address "$address" -n "$namespace" >/dev/null 2>&1; then
  temporal operator namespace create --address "$address" -n "$namespace" --retention "$retention"
fi

existing=$(temporal operator search-attribute list --address "$address" -n "$namespace" 2>/dev/null || true)
for name in $SEARCH_ATTRIBUTES; do
  if printf '%s\n' "$existing" | grep -qw "$name"; then
    echo "search attribute $name exists"
  else
    temporal operator search-attribute create --address "$address" -n "$namespace" --name "$name" --type Keyword
  fi
done
echo "Temporal namespace $namespace is ready"
