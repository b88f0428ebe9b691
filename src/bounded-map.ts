/**
 * The one eviction rule of the process's small memos (opened secrets, kept webhook
 * targets, prepared statements, agent rows, session keys): a Map keeps insertion order,
 * so when it is full the entry set longest ago goes first. Bounded, so that a stream of
 * distinct keys (tokens, SQL texts) cannot grow memory without end.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, value);
}
