/** The two spellings a field may arrive in: the wire (camelCase) and snake_case. */
export function toCamelCase(name: string): string {
  if (name.startsWith('_')) return name;
  const camel = name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  return camel.charAt(0).toLowerCase() + camel.slice(1);
}

export function toSnakeCase(name: string): string {
  if (name.startsWith('_')) return name;
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

export function fieldSpellings(name: string): string[] {
  return [...new Set([name, toCamelCase(name), toSnakeCase(name)])];
}
