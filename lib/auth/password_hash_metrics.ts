import { Counter, Gauge, type Registry } from 'prom-client';
import { getPasswordHashStats } from './passwords.ts';

/**
 * The password hash slots of this process on `registry`: hashes running and waiting now, and sign-ins hashed
 * or refused (503) by reason since the process started. Read when scraped; registering twice is a no-op.
 */
export function registerPasswordHashMetrics(registry: Registry): void {
  if (registry.getSingleMetric('lifeline_login_hashes_total')) return;
  new Gauge({
    name: 'lifeline_login_hashes_running',
    help: 'Password hashes (scrypt) running in this process now (at most 2).',
    registers: [registry],
    collect() {
      this.set(getPasswordHashStats().running);
    },
  });
  new Gauge({
    name: 'lifeline_login_hashes_waiting',
    help: 'Password hashes waiting for a slot in this process now (sign-ins: at most LOGIN_HASH_QUEUE_MAX).',
    registers: [registry],
    collect() {
      this.set(getPasswordHashStats().waiting);
    },
  });
  new Counter({
    name: 'lifeline_login_hashes_total',
    help:
      'Sign-ins by what became of their password hash: hashed, or answered 503 because the queue was full ' +
      '(full), their network had one waiting (network), the wait passed 10 s (timed_out) or the client left ' +
      '(abandoned).',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [outcome, count] of Object.entries(getPasswordHashStats().outcomes))
        this.inc({ outcome }, count);
    },
  });
}
