/** The classes a pipeline's stages name ($lookup.from, $unionWith.coll), at any depth, in order. */
export function classesNamed(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => classesNamed(v, out));
  else if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$lookup' && typeof (inner as { from?: unknown })?.from === 'string')
        out.push((inner as { from: string }).from);
      if (key === '$unionWith') {
        const coll = typeof inner === 'string' ? inner : (inner as { coll?: unknown })?.coll;
        if (typeof coll === 'string') out.push(coll);
      }
      classesNamed(inner, out);
    }
  }
  return out;
}
