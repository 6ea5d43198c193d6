import { createP6Client } from "../../clients/typescript/src/index.ts";
import { contractChecker } from "./contract.ts";

/**
 * The repository's TypeScript client against the running service, with every response it receives checked
 * against the service's own OpenAPI document (GET /v1/openapi.json). Files fetched outside the client go
 * through `download`, checked the same way.
 */
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
  return { client, contract, download, failures: () => contract.failures };
}
