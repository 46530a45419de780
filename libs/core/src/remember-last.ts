/** Sets `key` last in `map`'s order (the eviction order), dropping the first entry past `max`. */
export function rememberLast<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}
