/** What an example model is: a name and the files of its folder in a Triton model repository. */

export interface ExampleModelFile {
  /** Relative to the model's folder, e.g. `config.pbtxt` or `1/model.onnx`. */
  readonly path: string;
  readonly contents: Uint8Array | string;
}

export interface ExampleModel {
  readonly name: string;
  /** One line for `--help` and docs. */
  readonly description: string;
  build(): Promise<readonly ExampleModelFile[]>;
}
