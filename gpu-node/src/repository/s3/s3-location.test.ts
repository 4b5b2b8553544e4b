import { describe, expect, it } from 'vitest';
import { isRemoteUrl, isS3Url, parseS3Url } from './s3-location.js';

describe('S3 repository URLs', () => {
  it('parses s3://bucket/prefix with the prefix normalised to end with one slash', () => {
    expect(parseS3Url('s3://models-bucket/team/repo')).toEqual({
      url: 's3://models-bucket/team/repo',
      bucket: 'models-bucket',
      prefix: 'team/repo/',
      endpoint: undefined,
    });
    expect(parseS3Url('s3://b/repo/').prefix).toBe('repo/');
    expect(parseS3Url('s3://b').prefix).toBe('');
    expect(parseS3Url('s3://b/').prefix).toBe('');
  });

  it("parses Triton's host:port form, http by default", () => {
    expect(parseS3Url('s3://127.0.0.1:9000/b/repo')).toMatchObject({ endpoint: 'http://127.0.0.1:9000', bucket: 'b', prefix: 'repo/' });
    expect(parseS3Url('s3://https://minio.local:443/b/r').endpoint).toBe('https://minio.local:443');
  });

  it('rejects URLs without a usable bucket', () => {
    expect(() => parseS3Url('s3://')).toThrow("invalid S3 model repository 's3://'");
    expect(() => parseS3Url('s3:///prefix')).toThrow('expected s3://bucket/prefix');
    expect(() => parseS3Url('/local/path')).toThrow("not an S3 URL: '/local/path'");
  });

  it('tells URLs from local paths', () => {
    expect(isS3Url('s3://b/p')).toBe(true);
    expect(isRemoteUrl('gs://b/p')).toBe(true);
    expect(isRemoteUrl('/models')).toBe(false);
    expect(isRemoteUrl('models:v1/x')).toBe(false);
  });
});
