/**
 * `--model-repository` values naming an S3 repository, in the two forms tritonserver accepts:
 * `s3://bucket/prefix` (AWS, or the endpoint of AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL) and
 * `s3://[http://|https://]host:port/bucket/prefix` for an S3-compatible server named in the URL.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';

export interface S3Location {
  /** The URL as given, for messages. */
  readonly url: string;
  readonly bucket: string;
  /** Key prefix of the repository: '' (whole bucket) or ending with '/', so `models` never matches `models2/`. */
  readonly prefix: string;
  /** Endpoint named in the URL (host:port form); undefined: the SDK's own (AWS or the env override). */
  readonly endpoint: string | undefined;
}

export function isS3Url(location: string): boolean {
  return location.startsWith('s3://');
}

/** A URL scheme other than a local path's (gs://, as://, ...): those repositories are not supported. */
export function isRemoteUrl(location: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(location);
}

export function parseS3Url(url: string): S3Location {
  if (!isS3Url(url)) throw TesseraError.invalidArg(`not an S3 URL: '${url}'`);
  let rest = url.slice('s3://'.length);
  let endpoint: string | undefined;
  // Bucket names cannot hold ':', so a first segment with a port is an endpoint (Triton's host:port form).
  const hosted = /^(https?:\/\/)?([^/:]+):(\d+)\/(.*)$/.exec(rest);
  if (hosted) {
    endpoint = `${hosted[1] ?? 'http://'}${hosted[2]}:${hosted[3]}`;
    rest = hosted[4] ?? '';
  }
  const slash = rest.indexOf('/');
  const bucket = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? '' : rest.slice(slash + 1);
  if (!/^[a-z0-9][a-z0-9.\-_]{0,254}$/i.test(bucket)) {
    throw TesseraError.invalidArg(`invalid S3 model repository '${url}': expected s3://bucket/prefix`);
  }
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  return { url, bucket, prefix: trimmed === '' ? '' : `${trimmed}/`, endpoint };
}
