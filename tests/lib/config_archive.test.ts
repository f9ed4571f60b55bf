import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../lib/shared/config.ts';

// The settings of dead destinations: the Internet Archive (off by default), the fallback's answer, the automatic
// retarget of a move. A bad value names the variable and stops start-up.
function refused(env: Record<string, string>, variable: string, message?: RegExp): void {
  assert.throws(
    () => parseConfig(env),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.problems.some((p) => p.variable === variable && (!message || message.test(p.message))),
    `${variable} should be refused for ${JSON.stringify(env)}`,
  );
}

describe('configuration: dead destinations', () => {
  test('off by default: nothing goes to the Internet Archive, the fallback is our page, moves are proposed', () => {
    const config = parseConfig({});
    assert.deepEqual(config.archive, {
      mode: 'off',
      keys: undefined,
      saveBaseUrl: 'https://web.archive.org',
      availabilityBaseUrl: 'https://archive.org',
      ratePerMinute: 6,
    });
    assert.equal(config.redirect.fallbackAnswer, 'page');
    assert.deepEqual(config.deadDestinations, { autoRetargetMoved: false });
  });

  test('save needs both keys; lookup needs none', () => {
    refused({ ARCHIVE_MODE: 'save' }, 'ARCHIVE_ACCESS_KEY', /ARCHIVE_SECRET_KEY/);
    refused({ ARCHIVE_MODE: 'save', ARCHIVE_ACCESS_KEY: 'a' }, 'ARCHIVE_SECRET_KEY');
    const saving = parseConfig({ ARCHIVE_MODE: 'save', ARCHIVE_ACCESS_KEY: 'a', ARCHIVE_SECRET_KEY: 's' });
    assert.deepEqual(saving.archive.keys, { accessKey: 'a', secretKey: 's' });
    assert.equal(parseConfig({ ARCHIVE_MODE: 'lookup' }).archive.mode, 'lookup');
  });

  test('bad values name their variable', () => {
    refused({ ARCHIVE_MODE: 'always' }, 'ARCHIVE_MODE', /off, lookup or save/);
    refused({ ARCHIVE_RATE: '0' }, 'ARCHIVE_RATE', /above 0/);
    refused({ ARCHIVE_RATE: 'often' }, 'ARCHIVE_RATE', /per minute/);
    refused({ ARCHIVE_SAVE_BASE_URL: 'http://archive.example' }, 'ARCHIVE_SAVE_BASE_URL', /https/);
    refused({ ARCHIVE_AVAILABILITY_BASE_URL: 'ftp://archive.example' }, 'ARCHIVE_AVAILABILITY_BASE_URL');
    refused({ DEAD_FALLBACK_ANSWER: '302' }, 'DEAD_FALLBACK_ANSWER', /page or redirect/);
    refused({ DEAD_MOVED_AUTO_RETARGET: 'sometimes' }, 'DEAD_MOVED_AUTO_RETARGET');
    const local = parseConfig({
      ARCHIVE_SAVE_BASE_URL: 'http://127.0.0.1:9/',
      DEAD_FALLBACK_ANSWER: 'redirect',
      DEAD_MOVED_AUTO_RETARGET: 'true',
    });
    assert.equal(local.archive.saveBaseUrl, 'http://127.0.0.1:9');
    assert.equal(local.redirect.fallbackAnswer, 'redirect');
    assert.equal(local.deadDestinations.autoRetargetMoved, true);
  });
});
