import { afterAll } from "vitest";
import { checkRecordedAnswers } from "./answers";

/**
 * A setup file of the worker project: when a test file ends, the answers its tests received are checked against
 * the OpenAPI documents (test/helpers/answers.ts); any the document does not describe fails the file, listed.
 */
afterAll(async () => {
  const { failures } = await checkRecordedAnswers();
  if (failures.length > 0)
    throw new Error(
      `${failures.length} answer(s) the OpenAPI document does not describe:\n${failures.join("\n")}`,
    );
});
