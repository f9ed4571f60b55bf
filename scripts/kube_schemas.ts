// JSON schemas for kubeconform, made offline from Kubernetes's own OpenAPI document: the Go module
// k8s.io/kubernetes (fetched by .ci/run with `go mod download` from the Go module proxy, the one source of
// Kubernetes we can reach) carries api/openapi-spec/swagger.json. kubeconform's default schemas are downloaded
// from GitHub, which these machines cannot reach. What this makes follows kubeconform's own "standalone-strict"
// schemas: one file per kind, named as kubeconform's `{{ .ResourceKind }}{{ .KindSuffix }}.json` template expects,
// each with the definitions it refers to, objects closed to unknown fields (`additionalProperties: false`, which
// is what makes `kubeconform -strict` catch a misspelt field), int-or-string and quantities as YAML writes them.
//
//   npx tsx scripts/kube_schemas.ts OUT_DIR [swagger.json]    (default: the module in Go's module cache)
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';

/** The Kubernetes whose API the chart is checked against (.ci/run downloads the same module version). */
// renovate: datasource=go depName=k8s.io/kubernetes
export const KUBERNETES_VERSION = '1.36.3';
/**
 * The Prometheus Operator whose CRDs (ServiceMonitor, PrometheusRule) the chart is checked against: the Go module
 * github.com/prometheus-operator/prometheus-operator carries them in example/prometheus-operator-crd/.
 */
// renovate: datasource=go depName=github.com/prometheus-operator/prometheus-operator
export const PROMETHEUS_OPERATOR_VERSION = '0.85.0';

type Schema = { [key: string]: unknown };
type Gvk = { group: string; version: string; kind: string };

/** Where `go mod download k8s.io/kubernetes@v…` leaves swagger.json, in this machine's Go module cache. */
export function swaggerPath(): string {
  const go = spawnSync('/usr/local/go/bin/go', ['env', 'GOMODCACHE'], { encoding: 'utf8' });
  const cache = go.status === 0 && go.stdout.trim() ? go.stdout.trim() : join(homedir(), 'go', 'pkg', 'mod');
  return join(cache, 'k8s.io', `kubernetes@v${KUBERNETES_VERSION}`, 'api', 'openapi-spec', 'swagger.json');
}

/** Where `go mod download` leaves the Prometheus Operator's CRD of `plural` (e.g. servicemonitors). */
export function prometheusOperatorCrdPath(plural: string): string {
  const swagger = swaggerPath();
  const cache = swagger.slice(0, swagger.indexOf(`${join('k8s.io', 'kubernetes@')}`));
  return join(
    cache,
    'github.com',
    'prometheus-operator',
    `prometheus-operator@v${PROMETHEUS_OPERATOR_VERSION}`,
    'example',
    'prometheus-operator-crd',
    `monitoring.coreos.com_${plural}.yaml`,
  );
}

/** kubeconform's file name for a kind: `{{ .ResourceKind }}{{ .KindSuffix }}.json`. */
export function schemaFileName(apiVersion: string, kind: string): string {
  const [groupOrVersion, version] = apiVersion.split('/');
  const suffix = `-${groupOrVersion!.split('.')[0]!.toLowerCase()}${version ? `-${version.toLowerCase()}` : ''}`;
  return `${kind.toLowerCase()}${suffix}.json`;
}

const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/** One schema node made strict and YAML-friendly; definitions' $refs stay as they are. */
function convert(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(convert);
  if (!node || typeof node !== 'object') return node;
  const s = node as Schema;
  if (s.format === 'int-or-string') {
    return { description: s.description, oneOf: [{ type: 'string' }, { type: 'integer' }] };
  }
  const out: Schema = {};
  for (const [key, value] of Object.entries(s)) {
    if (key.startsWith('x-kubernetes-') && key !== 'x-kubernetes-preserve-unknown-fields') continue;
    out[key] = key === 'properties' ? mapValues(value as Schema, convert) : convert(value);
  }
  const isObject = s.type === 'object' || s.properties !== undefined;
  if (
    isObject &&
    s.properties &&
    out.additionalProperties === undefined &&
    !s['x-kubernetes-preserve-unknown-fields']
  ) {
    out.additionalProperties = false;
  }
  return out;
}

function mapValues(o: Schema, f: (v: unknown) => unknown): Schema {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
}

function refsOf(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) for (const n of node) refsOf(n, into);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') into.add(value.replace('#/definitions/', ''));
      else refsOf(value, into);
    }
  }
}

/** The definitions a schema needs, transitively (itself only when it refers to itself). */
function reachable(definitions: Record<string, Schema>, root: string): string[] {
  const seen = new Set<string>();
  const todo = [root];
  while (todo.length > 0) {
    const name = todo.pop()!;
    const refs = new Set<string>();
    refsOf(definitions[name], refs);
    for (const ref of refs) {
      if (!seen.has(ref)) {
        seen.add(ref);
        todo.push(ref);
      }
    }
  }
  return [...seen].sort();
}

/**
 * Writes one schema file per kind of `swagger` (or only those of `only`, as "apiVersion/Kind" strings) into
 * `outDir`; returns the file names written.
 */
export function writeKubeSchemas(swagger: string, outDir: string, only?: Set<string>): string[] {
  const definitions = (JSON.parse(readFileSync(swagger, 'utf8')) as { definitions: Record<string, Schema> })
    .definitions;
  const converted: Record<string, unknown> = mapValues(definitions, convert);
  converted[INT_OR_STRING] = { oneOf: [{ type: 'string' }, { type: 'integer' }] };
  converted[QUANTITY] = { oneOf: [{ type: 'string' }, { type: 'number' }] };
  mkdirSync(outDir, { recursive: true });
  const written: string[] = [];
  for (const [name, schema] of Object.entries(definitions)) {
    const gvks = (schema['x-kubernetes-group-version-kind'] ?? []) as Gvk[];
    for (const gvk of gvks) {
      const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
      if (only && !only.has(`${apiVersion}/${gvk.kind}`)) continue;
      const file = schemaFileName(apiVersion, gvk.kind);
      const body = {
        $schema: 'http://json-schema.org/draft-07/schema#',
        ...(converted[name] as Schema),
        definitions: Object.fromEntries(reachable(definitions, name).map((ref) => [ref, converted[ref]])),
      };
      writeFileSync(join(outDir, file), JSON.stringify(body));
      written.push(file);
    }
  }
  return written;
}

/** Writes one schema file per served version of the CustomResourceDefinition in `crdFile`; returns their names. */
export function writeCrdSchemas(crdFile: string, outDir: string): string[] {
  const crd = parse(readFileSync(crdFile, 'utf8')) as {
    spec: {
      group: string;
      names: { kind: string };
      versions: { name: string; schema: { openAPIV3Schema: Schema } }[];
    };
  };
  mkdirSync(outDir, { recursive: true });
  return crd.spec.versions.map((version) => {
    const file = schemaFileName(`${crd.spec.group}/${version.name}`, crd.spec.names.kind);
    const body = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      ...(convert(version.schema.openAPIV3Schema) as Schema),
    };
    writeFileSync(join(outDir, file), JSON.stringify(body));
    return file;
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const outDir = process.argv[2];
  if (!outDir) {
    console.error('usage: npx tsx scripts/kube_schemas.ts OUT_DIR [swagger.json]');
    process.exit(2);
  }
  const written = writeKubeSchemas(process.argv[3] ?? swaggerPath(), outDir);
  for (const plural of ['servicemonitors', 'prometheusrules']) {
    written.push(...writeCrdSchemas(prometheusOperatorCrdPath(plural), outDir));
  }
  console.error(`kube schemas: ${written.length} kinds → ${outDir}`);
}
