import { createP6Client } from "../../clients/typescript/src/index.ts";
import { type ContractFailure, contractChecker } from "./contract.ts";

/**
 * The repository's TypeScript client against the running service, with every response it receives checked
 * against the service's own OpenAPI document (GET /v1/openapi.json). Files fetched outside the client go
 * through `download`, checked the same way.
 */
/**
 * Mismatches that are the document's, not the service's, and that issue 14's OpenAPI work fixes: each is
 * reported on the console and not counted. TODO(openapi merge): empty this list once /files declares its real
 * content types.
 */
const PENDING_DOCUMENT_FIXES = [
  /^content-type (image|video|audio)\/[\w.+-]+ is not one of application\/octet-stream$/,
];

/** The recorded contract failures, less those PENDING_DOCUMENT_FIXES explains. */
function unexplained(failures: ContractFailure[]) {
  return failures.flatMap((failure) => {
    const problems = failure.problems.filter(
      (problem) => !PENDING_DOCUMENT_FIXES.some((re) => re.test(problem)),
    );
    if (problems.length < failure.problems.length) {
      console.warn(`pending a document fix: ${failure.request}: ${failure.problems.join("; ")}`);
    }
    return problems.length > 0 ? [{ ...failure, problems }] : [];
  });
}

export async function contractClient(base: string, apiKey: string) {
  const doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as Parameters<
    typeof contractChecker
  >[0];
  const contract = contractChecker(doc);
  const client = createP6Client({ baseUrl: base, apiKey });
  client.use(contract.middleware);
  const download = async (url: string) => {
    const response = await fetch(url);
    await contract.checkResponse("GET", "/files/{file_id}/{name}", response);
    return response;
  };
  return { client, contract, download, failures: () => unexplained(contract.failures) };
}
