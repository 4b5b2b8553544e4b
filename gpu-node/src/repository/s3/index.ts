// The S3 mirror itself (and with it the AWS SDK) is imported on demand by openRepositorySource.
export * from './s3-location.js';
export * from './repository-source.js';
