#!/bin/sh
# Production entry: runs one Lifeline process from the build (dist/, `npm run build`) on Node alone, with that
# process's Node flags, chosen by the first argument; the rest go to it. The container image's ENTRYPOINT, and
# what `npm run start:web` / `start:worker` run. The flags are those of the npm scripts that run the same entry
# from source (`npm run web`, `worker`, `export`, …): ADRs 0054 and 0085 for the web tier's, 0105 for the worker's,
# docs/ESCROW.md for the CLIs' heap bounds.
#
#   scripts/lifeline.sh web|worker|migrate|export|restore|snapshot|admin-reset|healthcheck [args...]
set -eu
cd "$(dirname "$0")/.."
role="${1:-web}"
[ "$#" -gt 0 ] && shift
case "$role" in
  web)
    # The web tier's old generation (ADR 0085) and young generation (ADR 0103) are bounded unless NODE_OPTIONS
    # names a size: a flag here would win over NODE_OPTIONS, and compose and the chart set the old generation's
    # there for operators to change. The flags are package.json's "web" script's.
    flags="--no-memory-reducer"
    case "${NODE_OPTIONS:-}" in *--max-old-space-size*) ;; *) flags="$flags --max-old-space-size=224" ;; esac
    case "${NODE_OPTIONS:-}" in *--max-semi-space-size*) ;; *) flags="$flags --max-semi-space-size=16" ;; esac
    # shellcheck disable=SC2086 # $flags is a list of words
    exec node $flags dist/web.mjs "$@"
    ;;
  worker)
    # The worker's heap is bounded (ADR 0105) unless NODE_OPTIONS names a size, as for the web tier; the flag is
    # package.json's "worker" script's.
    flags=""
    case "${NODE_OPTIONS:-}" in *--max-old-space-size*) ;; *) flags="--max-old-space-size=512" ;; esac
    # shellcheck disable=SC2086 # $flags is a list of words
    exec node $flags dist/worker.mjs "$@"
    ;;
  migrate) exec node dist/migrate.mjs "$@" ;;
  export) exec node --max-semi-space-size=2 --max-old-space-size=128 dist/export.mjs "$@" ;;
  restore) exec node --max-semi-space-size=2 dist/restore.mjs "$@" ;;
  snapshot) exec node --max-semi-space-size=2 --max-old-space-size=128 dist/snapshot.mjs "$@" ;;
  admin-reset) exec node dist/reset_admin.mjs "$@" ;;
  healthcheck) exec node dist/healthcheck.mjs "$@" ;;
  *)
    echo "lifeline: unknown entry '$role'; one of: web worker migrate export restore snapshot admin-reset healthcheck" >&2
    exit 64
    ;;
esac
