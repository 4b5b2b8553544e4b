/** What a load through the repository API may carry besides the model's name. */
export interface LoadOptions {
  /** A ModelConfig in JSON (the repository API's `config` parameter) overriding config.pbtxt. */
  readonly configJson?: string;
  /** `file:<version>/<name>` overrides, already base64-decoded. */
  readonly files?: ReadonlyMap<string, Uint8Array>;
}
