import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fitTrend } from '../../bench/redirect/trend.ts';

test('a flat series with swings has a flat trend and shows its scatter', () => {
  const t = fitTrend([100, 90, 110, 110, 90, 100]);
  assert.ok(Math.abs(t.lastToFirst - 1) < 1e-9, `lastToFirst ${t.lastToFirst}`);
  assert.ok(t.scatter > 0.05 && t.scatter < 0.1, `scatter ${t.scatter}`);
});

test('a steady decline is measured exactly, with no scatter', () => {
  const t = fitTrend([100, 95, 90, 85, 80]);
  assert.equal(t.lastToFirst, 0.8);
  assert.equal(t.perSample, -5 / 90);
  assert.equal(t.scatter, 0);
});

test('one low last sample moves the line far less than it moves last ÷ first', () => {
  const values = [100, 100, 100, 100, 100, 100, 100, 100, 100, 90];
  const t = fitTrend(values);
  // last ÷ first is 90%; the line through all ten falls ~5%.
  assert.ok(t.lastToFirst > 0.94 && t.lastToFirst < 0.96, `lastToFirst ${t.lastToFirst}`);
});

test('fewer than two samples is refused', () => {
  assert.throws(() => fitTrend([1]), /at least two/);
});
