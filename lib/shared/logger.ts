import { pino } from 'pino';

export type Logger = pino.Logger;

/** Paths whose values never reach a log line, wherever they appear. */
const REDACT_PATHS = [
  'authorization',
  'cookie',
  'password',
  'token',
  'secret',
  'apiKey',
  'apiSecret',
  'clientSecret',
  '*.authorization',
  '*.cookie',
  '*.password',
  '*.token',
  '*.secret',
  '*.apiKey',
  '*.apiSecret',
  '*.clientSecret',
  'config.oidc.clientSecret',
  'headers.authorization',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-lifeline-signature"]',
];

/** Structured JSON logs on stdout (pino), secrets redacted. */
export function createLogger(options: {
  level: string;
  name?: string;
  destination?: pino.DestinationStream;
}): Logger {
  return pino(
    {
      name: options.name ?? 'lifeline',
      level: options.level,
      base: { service: options.name ?? 'lifeline' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    options.destination,
  );
}
