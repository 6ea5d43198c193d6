/** Per test file: remove the outputs the file saved for inspection. */
import { afterAll } from "vitest";
import { removeSavedBodies } from "./engine.ts";

afterAll(removeSavedBodies);
