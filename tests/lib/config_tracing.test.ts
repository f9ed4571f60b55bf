import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../lib/shared/config.ts';

const refuses = (env: Record<string, string>, variable: string) => {
  let problems: { variable: string; message: string }[] = [];
  assert.throws(
    () => parseConfig(env),
    (e: unknown) => {
      if (!(e instanceof ConfigError)) return false;
      problems = e.problems;
      return e.problems.some((p) => p.variable === variable);
    },
    `${JSON.stringify(env)} should name ${variable}`,
  );
  return problems;
};

describe('tracing configuration (OpenTelemetry names)', () => {
  test('off unless an OTLP endpoint is set; the traces URL follows the specification', () => {
    assert.equal(parseConfig({}).tracing, undefined);
    assert.equal(
      parseConfig({ OTEL_SERVICE_NAME: 'links', OTEL_TRACES_SAMPLER: 'always_on' }).tracing,
      undefined,
    );
    assert.deepEqual(parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing, {
      tracesUrl: 'http://collector:4318/v1/traces',
      headers: {},
      serviceName: undefined,
      sampler: { name: 'parentbased_always_on', ratio: 1 },
    });
    // The signal's own endpoint is used as given, and wins over the base one.
    assert.equal(
      parseConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://tempo.example/otlp/v1/traces',
      }).tracing?.tracesUrl,
      'https://tempo.example/otlp/v1/traces',
    );
    // The specification's switch turns it off whatever else is set.
    assert.equal(
      parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })
        .tracing,
      undefined,
    );
  });

  test('headers, service name and sampler are read as the specification writes them', () => {
    const tracing = parseConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Basic%20dXNlcjpwYXNz, x-scope-orgid=newsroom',
      OTEL_SERVICE_NAME: 'lifeline-prod',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    }).tracing;
    assert.deepEqual(tracing?.headers, { authorization: 'Basic dXNlcjpwYXNz', 'x-scope-orgid': 'newsroom' });
    assert.equal(tracing?.serviceName, 'lifeline-prod');
    assert.deepEqual(tracing?.sampler, { name: 'parentbased_traceidratio', ratio: 0.25 });
  });

  test('a wrong setting is named, and a header value is never repeated', () => {
    const problems = refuses(
      { OTEL_EXPORTER_OTLP_HEADERS: 'Authorization Bearer s3cret-token' },
      'OTEL_EXPORTER_OTLP_HEADERS',
    );
    assert.ok(!JSON.stringify(problems).includes('s3cret-token'), 'the header value is not in the message');
    refuses({ OTEL_EXPORTER_OTLP_HEADERS: 'x=%E0%A4%A' }, 'OTEL_EXPORTER_OTLP_HEADERS');
    refuses({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT');
    refuses(
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://collector:4317' },
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    );
    refuses({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL');
    refuses({ OTEL_TRACES_SAMPLER: 'jaeger_remote' }, 'OTEL_TRACES_SAMPLER');
    refuses({ OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG');
    refuses({ OTEL_TRACES_SAMPLER_ARG: 'half' }, 'OTEL_TRACES_SAMPLER_ARG');
    refuses({ OTEL_SDK_DISABLED: 'maybe' }, 'OTEL_SDK_DISABLED');
  });
});
