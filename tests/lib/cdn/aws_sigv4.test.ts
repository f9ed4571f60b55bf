import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { deriveSigningKey, signAwsRequest } from '../../../lib/cdn/aws_sigv4.ts';

// AWS's published Signature Version 4 test suite (docs.aws.amazon.com/general/latest/gr/signature-v4-test-suite.html,
// also shipped in awslabs/aws-c-auth tests/aws-signing-test-suite) and the IAM ListUsers example of the
// "Create a signed AWS API request" guide. Same example credentials and clock for all of them.
const credentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};
const now = new Date('2015-08-30T12:36:00Z');
const suite = { credentials, region: 'us-east-1', service: 'service', now };

describe('SigV4 signer against the published vectors', () => {
  test('get-vanilla', async () => {
    const signed = await signAwsRequest({ method: 'GET', url: 'https://example.amazonaws.com/' }, suite);
    assert.equal(
      signed.canonicalRequest,
      'GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n' +
        'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    assert.equal(
      signed.authorization,
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, ' +
        'SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
    assert.equal(signed.headers['x-amz-date'], '20150830T123600Z');
  });

  test('get-vanilla-query-order-key-case: the query is sorted before signing', async () => {
    const signed = await signAwsRequest(
      { method: 'GET', url: 'https://example.amazonaws.com/?Param2=value2&Param1=value1' },
      suite,
    );
    assert.equal(signed.signature, 'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500');
  });

  test('post-x-www-form-urlencoded: a signed Content-Type and a hashed body', async () => {
    const signed = await signAwsRequest(
      {
        method: 'POST',
        url: 'https://example.amazonaws.com/',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'Param1=value1',
      },
      suite,
    );
    assert.equal(
      signed.stringToSign,
      'AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n' +
        '42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281',
    );
    assert.equal(
      signed.authorization,
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, ' +
        'SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a',
    );
  });

  test('the IAM ListUsers example: derived key and signature', async () => {
    const key = Buffer.from(
      await deriveSigningKey(credentials.secretAccessKey, '20150830', 'us-east-1', 'iam'),
    );
    assert.equal(key.toString('hex'), 'c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9');
    const signed = await signAwsRequest(
      {
        method: 'GET',
        url: 'https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' },
      },
      { ...suite, service: 'iam' },
    );
    assert.equal(signed.signature, '5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7');
  });

  test('a session token is sent and signed; a different secret signs differently', async () => {
    const withToken = await signAwsRequest(
      { method: 'GET', url: 'https://example.amazonaws.com/' },
      { ...suite, credentials: { ...credentials, sessionToken: 'token-1' } },
    );
    assert.equal(withToken.headers['x-amz-security-token'], 'token-1');
    assert.match(withToken.authorization, /SignedHeaders=host;x-amz-date;x-amz-security-token,/);
    const other = await signAwsRequest(
      { method: 'GET', url: 'https://example.amazonaws.com/' },
      { ...suite, credentials: { ...credentials, secretAccessKey: 'other' } },
    );
    assert.notEqual(other.signature, '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31');
  });
});
