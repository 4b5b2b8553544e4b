// The ModelInfer fast path ahead of grpc-js, against grpc-js's own handler (h2-model-infer-suite.ts).
import { modelInferSuite } from './h2-model-infer-suite.js';

modelInferSuite(false);
