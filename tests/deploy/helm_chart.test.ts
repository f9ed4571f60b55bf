// The Helm chart (deploy/helm/lifeline), checked without a cluster: `helm lint`, then `helm template` for the
// default values and for values-temporal-cloud.yaml, each manifest validated by `kubeconform -strict` against
// schemas made here from Kubernetes's own OpenAPI document and the Prometheus Operator's CRDs (both Go modules;
// scripts/kube_schemas.ts), and read back for what the chart promises: probes on the documented ports, non-root
// read-only containers with resources, the migrations as a pre-install/pre-upgrade hook, settings the
// configuration schema accepts, the Temporal TLS material mounted from a Secret, and the alert rules as they are
// in ops/prometheus/lifeline.rules.yml.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { parseConfig } from '../../lib/shared/config.ts';
import { RULES_IN_CHART, RULES_SOURCE } from '../../scripts/chart_rules.ts';
import { settingNames } from '../../scripts/env_example_render.ts';
import {
  KUBERNETES_VERSION,
  PROMETHEUS_OPERATOR_VERSION,
  prometheusOperatorCrdPath,
  swaggerPath,
  writeCrdSchemas,
  writeKubeSchemas,
} from '../../scripts/kube_schemas.ts';
import { ROOT, TOOLS_BIN } from '../../scripts/temporal_cli.ts';

const CHART = join(ROOT, 'deploy', 'helm', 'lifeline');
const HELM = join(TOOLS_BIN, 'helm');
const KUBECONFORM = join(TOOLS_BIN, 'kubeconform');
const scratch = mkdtempSync(join(tmpdir(), 'lifeline-helm-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const missing = [
  existsSync(HELM) ? undefined : '.tools/bin/helm',
  existsSync(KUBECONFORM) ? undefined : '.tools/bin/kubeconform',
  existsSync(swaggerPath()) ? undefined : `k8s.io/kubernetes@v${KUBERNETES_VERSION} in the Go module cache`,
  existsSync(prometheusOperatorCrdPath('servicemonitors'))
    ? undefined
    : `github.com/prometheus-operator/prometheus-operator@v${PROMETHEUS_OPERATOR_VERSION} in the Go module cache`,
].filter(Boolean);
const skip = missing.length > 0 ? `${missing.join(', ')} missing (.ci/run installs them)` : false;

type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec: Record<string, unknown>;
};
type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } };
type Probe = { httpGet: { path: string; port: string | number } };
type Container = {
  name: string;
  args: string[];
  env: EnvVar[];
  envFrom: { secretRef: { name: string } }[];
  ports?: { name: string; containerPort: number }[];
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: { readOnlyRootFilesystem: boolean; allowPrivilegeEscalation: boolean };
  volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
};
type PodSpec = {
  containers: Container[];
  securityContext: { runAsNonRoot: boolean; runAsUser: number };
  automountServiceAccountToken: boolean;
  terminationGracePeriodSeconds?: number;
  volumes: { name: string; secret?: { secretName: string; items: { key: string; path: string }[] } }[];
};

const helmEnv = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: scratch,
  HELM_CACHE_HOME: join(scratch, 'helm-cache'),
  HELM_CONFIG_HOME: join(scratch, 'helm-config'),
  HELM_DATA_HOME: join(scratch, 'helm-data'),
};

function helm(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(HELM, args, { cwd: ROOT, encoding: 'utf8', env: helmEnv, maxBuffer: 64 << 20 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

function render(args: string[]): { text: string; manifests: Manifest[] } {
  const run = helm(['template', 'lifeline', CHART, '--kube-version', KUBERNETES_VERSION, ...args]);
  assert.equal(run.status, 0, run.stderr);
  const manifests = parseAllDocuments(run.stdout)
    .map((d) => d.toJSON() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
  return { text: run.stdout, manifests };
}

let schemaDir: string | undefined;
/** kubeconform's schemas for every kind the chart can render, made once per run from the Go modules. */
function schemas(): string {
  if (!schemaDir) {
    schemaDir = join(scratch, 'schemas');
    const kinds = new Set([
      'apps/v1/Deployment',
      'v1/Service',
      'autoscaling/v2/HorizontalPodAutoscaler',
      'policy/v1/PodDisruptionBudget',
      'batch/v1/Job',
      'networking.k8s.io/v1/NetworkPolicy',
    ]);
    writeKubeSchemas(swaggerPath(), schemaDir, kinds);
    for (const plural of ['servicemonitors', 'prometheusrules']) {
      writeCrdSchemas(prometheusOperatorCrdPath(plural), schemaDir);
    }
  }
  return schemaDir;
}

type Summary = { valid: number; invalid: number; errors: number; skipped: number };
function kubeconform(manifests: string): { status: number | null; summary: Summary; output: string } {
  const run = spawnSync(
    KUBECONFORM,
    [
      '-strict',
      '-summary',
      '-output',
      'json',
      '-kubernetes-version',
      KUBERNETES_VERSION,
      '-schema-location',
      join(schemas(), '{{ .ResourceKind }}{{ .KindSuffix }}.json'),
      '-',
    ],
    { input: manifests, encoding: 'utf8' },
  );
  const summary = (JSON.parse(run.stdout) as { summary: Summary }).summary;
  return { status: run.status, summary, output: run.stdout };
}

function byKind(manifests: Manifest[], kind: string, nameEnd: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name.endsWith(nameEnd));
  assert.ok(found, `a ${kind} named …${nameEnd}`);
  return found;
}

function podSpec(m: Manifest): PodSpec {
  return (m.spec.template as { spec: PodSpec }).spec;
}

/** A container's plain settings with the existing Secret's variables filled as an operator would. */
function environmentOf(container: Container): Record<string, string> {
  const env: Record<string, string> = {
    DATABASE_URL: 'postgres://lifeline:secret@db.internal:5432/lifeline',
    REDIS_URL: 'redis://redis.internal:6379',
    METRICS_TOKEN: 'helm-test-metrics-token',
  };
  for (const v of container.env) env[v.name] = v.value ?? 'from-a-secret';
  return env;
}

test('the chart holds the current alert rules (npm run chart:rules)', () => {
  assert.equal(
    readFileSync(RULES_IN_CHART, 'utf8'),
    readFileSync(RULES_SOURCE, 'utf8'),
    'deploy/helm/lifeline/files/lifeline.rules.yml is stale: run `npm run chart:rules` and commit it',
  );
});

test("the chart's appVersion is Lifeline's version, and its settings are ones the schema reads", () => {
  const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { appVersion: string };
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(chart.appVersion, pkg.version);
  const values = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as {
    config: Record<string, string>;
  };
  const names = new Set(settingNames());
  for (const name of Object.keys(values.config))
    assert.ok(names.has(name), `values.yaml config.${name} is a setting`);
});

test('.ci/run downloads the module versions the schemas are made from', () => {
  const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
  // The versions live in one variable each (watched by Renovate: tests/deploy/renovate.test.ts); the download
  // line uses those variables.
  assert.match(ci, new RegExp(`^kubernetes_version=${KUBERNETES_VERSION.replaceAll('.', '\\.')}$`, 'm'));
  assert.match(
    ci,
    new RegExp(`^prometheus_operator_version=${PROMETHEUS_OPERATOR_VERSION.replaceAll('.', '\\.')}$`, 'm'),
  );
  assert.match(ci, /go mod download "k8s\.io\/kubernetes@v\$kubernetes_version"/);
  assert.match(ci, /"github\.com\/prometheus-operator\/prometheus-operator@v\$prometheus_operator_version"/);
});

describe('helm lint, helm template | kubeconform -strict', { skip }, () => {
  test('helm lint passes with the default values and with values-temporal-cloud.yaml', () => {
    for (const args of [[], ['-f', join(CHART, 'values-temporal-cloud.yaml')]]) {
      const run = helm(['lint', '--strict', CHART, ...args]);
      assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
      assert.match(run.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  });

  test('the default values render manifests kubeconform accepts, and it refuses a misspelt field', () => {
    const { text, manifests } = render([]);
    const result = kubeconform(text);
    assert.equal(result.status, 0, result.output);
    assert.deepEqual(result.summary, { valid: manifests.length, invalid: 0, errors: 0, skipped: 0 });
    assert.deepEqual(manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort(), [
      'Deployment/lifeline-web',
      'Deployment/lifeline-worker',
      'HorizontalPodAutoscaler/lifeline-web',
      'Job/lifeline-migrate',
      'NetworkPolicy/lifeline-migrate',
      'NetworkPolicy/lifeline-web',
      'NetworkPolicy/lifeline-worker',
      'PodDisruptionBudget/lifeline-web',
      'Service/lifeline-web',
      'Service/lifeline-worker',
    ]);
    const broken = kubeconform(text.replace('readinessProbe:', 'readynessProbe:'));
    assert.notEqual(broken.status, 0);
    assert.equal(broken.summary.invalid, 1, broken.output);
  });

  test('probes, security, resources and the migrations hook, as docs/DEPLOYING.md describes them', () => {
    const { manifests } = render([]);
    const web = byKind(manifests, 'Deployment', '-web');
    const worker = byKind(manifests, 'Deployment', '-worker');
    const job = byKind(manifests, 'Job', '-migrate');
    const [webC] = podSpec(web).containers;
    const [workerC] = podSpec(worker).containers;
    assert.deepEqual(webC!.args, ['web']);
    assert.deepEqual(workerC!.args, ['worker']);
    assert.deepEqual(podSpec(job).containers[0]!.args, ['migrate']);
    assert.deepEqual(webC!.ports, [{ name: 'http', containerPort: 8000, protocol: 'TCP' }]);
    assert.deepEqual(workerC!.ports, [{ name: 'health', containerPort: 9464, protocol: 'TCP' }]);
    assert.equal(webC!.livenessProbe!.httpGet.path, '/livez');
    assert.equal(webC!.readinessProbe!.httpGet.path, '/readyz');
    assert.equal(webC!.readinessProbe!.httpGet.port, 'http');
    assert.equal(workerC!.livenessProbe!.httpGet.path, '/livez');
    assert.equal(workerC!.readinessProbe!.httpGet.path, '/readyz');
    assert.equal(workerC!.readinessProbe!.httpGet.port, 'health');
    assert.equal(podSpec(web).terminationGracePeriodSeconds, 30);
    assert.equal(podSpec(worker).terminationGracePeriodSeconds, 75);
    assert.equal(
      job.metadata.annotations?.['helm.sh/hook'],
      'pre-install,pre-upgrade',
      'migrations run before an install or upgrade applies the new pods',
    );
    for (const m of [web, worker, job]) {
      const spec = podSpec(m);
      assert.equal(spec.securityContext.runAsNonRoot, true);
      assert.ok(spec.securityContext.runAsUser > 0);
      assert.equal(spec.automountServiceAccountToken, false);
      for (const c of spec.containers) {
        assert.equal(c.securityContext.readOnlyRootFilesystem, true);
        assert.equal(c.securityContext.allowPrivilegeEscalation, false);
        assert.ok(c.resources.requests.cpu && c.resources.requests.memory, `${c.name} requests resources`);
        assert.ok(c.resources.limits.memory, `${c.name} has a memory limit`);
        assert.ok(
          c.volumeMounts.some((v) => v.mountPath === '/tmp'),
          `${c.name} has a writable /tmp`,
        );
        assert.deepEqual(c.envFrom, [{ secretRef: { name: 'lifeline' } }], 'secrets by reference only');
        const parsed = parseConfig(environmentOf(c));
        assert.equal(parsed.temporal.address, 'temporal-frontend.temporal.svc.cluster.local:7233');
        assert.equal(parsed.temporal.namespace, 'lifeline');
        assert.equal(parsed.workerHealth.port, 9464);
        assert.equal(parsed.port, 8000);
        const names = new Set(settingNames());
        for (const v of c.env) {
          assert.ok(names.has(v.name) || v.name === 'NODE_OPTIONS', `${v.name} is a setting Lifeline reads`);
        }
      }
    }
    // docs/DEPLOYING.md, "Sizing": 1 CPU and 512 MiB per web instance with the heap bounded; 1 GiB per worker.
    assert.deepEqual(webC!.resources.requests, { cpu: '1', memory: '512Mi' });
    assert.equal(webC!.env.find((v) => v.name === 'NODE_OPTIONS')?.value, '--max-old-space-size=224');
    assert.equal(workerC!.resources.requests.memory, '1Gi');
    const hpa = byKind(manifests, 'HorizontalPodAutoscaler', '-web').spec as { minReplicas: number };
    assert.equal(hpa.minReplicas, 2);
    assert.equal(web.spec.replicas, undefined, 'the HPA owns the replica count');
  });

  test('values-temporal-cloud.yaml: mTLS from a Secret, ServiceMonitors and the PrometheusRule, all valid', () => {
    const { text, manifests } = render(['-f', join(CHART, 'values-temporal-cloud.yaml')]);
    const result = kubeconform(text);
    assert.equal(result.status, 0, result.output);
    assert.deepEqual(result.summary, { valid: manifests.length, invalid: 0, errors: 0, skipped: 0 });

    const worker = byKind(manifests, 'Deployment', '-worker');
    const spec = podSpec(worker);
    const container = spec.containers[0]!;
    const parsed = parseConfig(environmentOf(container));
    assert.equal(parsed.temporal.address, 'newsroom.a1b2c.tmprl.cloud:7233');
    assert.equal(parsed.temporal.namespace, 'newsroom.a1b2c');
    assert.equal(parsed.temporal.settings.TEMPORAL_TLS, true);
    const certPath = parsed.temporal.settings.TEMPORAL_TLS_CLIENT_CERT_PATH!;
    const keyPath = parsed.temporal.settings.TEMPORAL_TLS_CLIENT_KEY_PATH!;
    const mount = container.volumeMounts.find((v) => v.name === 'temporal-tls');
    assert.ok(mount?.readOnly);
    assert.ok(certPath.startsWith(`${mount.mountPath}/`) && keyPath.startsWith(`${mount.mountPath}/`));
    const volume = spec.volumes.find((v) => v.name === 'temporal-tls');
    assert.equal(volume?.secret?.secretName, 'lifeline-temporal-client');
    assert.deepEqual(
      volume?.secret?.items.map((i) => `${mount.mountPath}/${i.path}`).sort(),
      [certPath, keyPath].sort(),
      'the paths the settings name are the files the Secret is mounted as',
    );
    assert.equal(parsed.temporal.settings.TEMPORAL_TLS_SERVER_CA_CERT_PATH, undefined, 'public roots');

    // The rules as promtool tests them, and scrapes under the job names they select on.
    const rule = byKind(manifests, 'PrometheusRule', 'lifeline');
    const source = parse(readFileSync(RULES_SOURCE, 'utf8')) as { groups: unknown[] };
    assert.deepEqual(rule.spec.groups, source.groups);
    const jobs = manifests
      .filter((m) => m.kind === 'ServiceMonitor')
      .map((m) => (m.spec.endpoints as { relabelings: { targetLabel: string; replacement: string }[] }[])[0]!)
      .map((e) => e.relabelings.find((r) => r.targetLabel === 'job')?.replacement)
      .sort();
    assert.deepEqual(jobs, ['lifeline-web', 'lifeline-worker']);
    for (const job of jobs) assert.match(readFileSync(RULES_SOURCE, 'utf8'), new RegExp(`job="${job}"`));
  });

  test('values.schema.json stops a wrong value naming it, as the configuration schema would', () => {
    const refused = (args: string[], field: RegExp) => {
      const run = helm(['template', 'lifeline', CHART, ...args]);
      assert.notEqual(run.status, 0, `refused: ${args.join(' ')}`);
      assert.match(run.stderr, field);
    };
    refused(['--set', 'temporal.address=https://temporal.example:7233'], /\/temporal\/address/);
    refused(
      ['--set', 'config.DATABASE_URL=postgres://lifeline:secret@db/lifeline'],
      /\/config\/DATABASE_URL/,
    );
    refused(['--set', 'existingSecret='], /\/existingSecret/);
    refused(
      ['--set', 'web.autoscaling.targetCPUUtilizationPercentage=160'],
      /targetCPUUtilizationPercentage/,
    );
    // The chart's address rule and Lifeline's agree on both sides of the line.
    for (const address of ['temporal:7233', '[::1]:7233', 'newsroom.a1b2c.tmprl.cloud:7233']) {
      assert.equal(
        helm(['template', 'lifeline', CHART, '--set', `temporal.address=${address}`]).status,
        0,
        address,
      );
      assert.equal(parseConfig({ TEMPORAL_ADDRESS: address }).temporal.address, address);
    }
    assert.throws(
      () => parseConfig({ TEMPORAL_ADDRESS: 'https://temporal.example:7233' }),
      /TEMPORAL_ADDRESS/,
    );
  });

  test('an API key comes from its Secret by reference, and turns TLS on', () => {
    const { text, manifests } = render([
      '-f',
      join(CHART, 'values-temporal-cloud.yaml'),
      '--set',
      'temporal.tls.existingSecret=',
      '--set',
      'temporal.apiKey.existingSecret=lifeline-temporal-api-key',
      '--set',
      'temporal.address=us-east-1.aws.api.temporal.io:7233',
    ]);
    assert.equal(kubeconform(text).status, 0);
    const container = podSpec(byKind(manifests, 'Deployment', '-web')).containers[0]!;
    assert.deepEqual(container.env.find((v) => v.name === 'TEMPORAL_API_KEY')?.valueFrom, {
      secretKeyRef: { name: 'lifeline-temporal-api-key', key: 'TEMPORAL_API_KEY' },
    });
    const parsed = parseConfig(environmentOf(container));
    assert.equal(parsed.temporal.settings.TEMPORAL_TLS, true);
    assert.equal(parsed.temporal.settings.TEMPORAL_TLS_CLIENT_CERT_PATH, undefined);
    assert.ok(!container.volumeMounts.some((v) => v.name === 'temporal-tls'));
  });
  test('tracing: off by default; with an endpoint, web and worker get the OTLP settings, headers by reference', () => {
    const off = render([]).manifests;
    for (const name of ['-web', '-worker']) {
      const env = podSpec(byKind(off, 'Deployment', name)).containers[0]!.env;
      assert.ok(!env.some((v) => v.name.startsWith('OTEL_')), `no OTEL_ setting on ${name} by default`);
    }
    const { text, manifests } = render([
      '--set',
      'tracing.endpoint=http://otel-collector.observability.svc:4318',
      '--set',
      'tracing.sampler=parentbased_traceidratio',
      '--set-string',
      'tracing.samplerArg=0.1',
      '--set',
      'tracing.headers.existingSecret=lifeline-otlp',
    ]);
    assert.equal(kubeconform(text).status, 0);
    for (const name of ['-web', '-worker']) {
      const container = podSpec(byKind(manifests, 'Deployment', name)).containers[0]!;
      assert.deepEqual(container.env.find((v) => v.name === 'OTEL_EXPORTER_OTLP_HEADERS')?.valueFrom, {
        secretKeyRef: { name: 'lifeline-otlp', key: 'OTEL_EXPORTER_OTLP_HEADERS' },
      });
      const tracing = parseConfig({
        ...environmentOf(container),
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20t0ken',
      }).tracing;
      assert.equal(tracing?.tracesUrl, 'http://otel-collector.observability.svc:4318/v1/traces', name);
      assert.deepEqual(tracing?.sampler, { name: 'parentbased_traceidratio', ratio: 0.1 });
    }
    const refused = helm(['template', 'lifeline', CHART, '--set', 'tracing.endpoint=otel-collector:4318']);
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr, /\/tracing\/endpoint/);
  });
});
