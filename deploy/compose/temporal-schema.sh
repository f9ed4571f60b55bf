#!/bin/sh
# compose.yaml's temporal-schema job: creates Temporal's two databases in its own Postgres (when missing) and
# brings their schemas to the version this admin-tools image carries. Safe to run on every `up`: each step
# leaves an existing database or an applied schema version as it is. The shape follows Temporal's own compose
# example (temporalio/samples-server, compose/scripts/setup-postgres.sh).
set -eu
: "${POSTGRES_SEEDS:?}" "${POSTGRES_USER:?}" "${SQL_PASSWORD:?}"
port=${DB_PORT:-5432}
tool() { temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -u "$POSTGRES_USER" -p "$port" "$@"; }

for db in temporal temporal_visibility; do
  dir=temporal
  [ "$db" = temporal_visibility ] && dir=visibility
  tool --db "$db" create || echo "database $db exists"
  tool --db "$db" setup-schema -v 0.0
  tool --db "$db" update-schema -d "/etc/temporal/schema/postgresql/v12/$dir/versioned"
done
echo 'Temporal schemas are current'
