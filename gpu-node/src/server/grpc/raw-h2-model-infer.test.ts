// The same comparison with the fast path on the raw HTTP/2 front (--grpc-raw-h2).
import { modelInferSuite } from './h2-model-infer-suite.js';

modelInferSuite(true);
