/**
 * Worker-thread entry of the onnxruntime backend's pooled threads (worker-pool.ts): each thread hosts
 * many instances, one InferenceSession each, run one at a time in turns (session-host.ts), because
 * session.run blocks the thread it runs on for the whole inference.
 */
import { serveSessions } from '../worker/session-host.js';
import { ortSessions } from './onnxruntime-sessions.js';

serveSessions(ortSessions);
