import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Db = ReturnType<typeof build>;

const build = (d1: D1Database) => drizzle(d1, { schema });
const cache = new WeakMap<D1Database, Db>();

/** The drizzle handle of a D1 binding, built once per isolate (it is stateless). */
export function createDb(d1: D1Database): Db {
  let db = cache.get(d1);
  if (!db) {
    db = build(d1);
    cache.set(d1, db);
  }
  return db;
}
