import assert from 'node:assert/strict';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: { path: string; message: string }[];
}

/** Asserts `res` is an RFC 9457 problem with `status` and returns its body. */
export async function expectProblem(res: Response, status: number): Promise<Problem> {
  assert.equal(res.status, status, await res.clone().text());
  assert.equal(res.headers.get('Content-Type'), 'application/problem+json');
  const body = (await res.json()) as Problem;
  assert.equal(body.status, status);
  assert.ok(body.title && body.detail, 'a problem has a title and a detail');
  return body;
}

/** Asserts a problem names `path` among its field errors. */
export async function expectFieldProblem(res: Response, status: number, path: string): Promise<Problem> {
  const body = await expectProblem(res, status);
  assert.ok(
    body.errors?.some((e) => e.path === path),
    `expected an error at ${path}, got ${JSON.stringify(body.errors)}`,
  );
  return body;
}
