/** `npm start`: runs the service (see server.ts). */
import { serve } from './server.js';

await serve();
