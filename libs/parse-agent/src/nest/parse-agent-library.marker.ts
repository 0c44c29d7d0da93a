/** Marks the library's own Nest modules, so tool discovery can tell which modules import them. */
const LIBRARY_MODULE = Symbol.for('parse-agent:library-module');

export function ParseAgentLibraryModule(): ClassDecorator {
  return (target) => {
    Reflect.defineMetadata(LIBRARY_MODULE, true, target);
  };
}

export function isParseAgentLibraryModule(metatype: unknown): boolean {
  return typeof metatype === 'function' && Reflect.getMetadata(LIBRARY_MODULE, metatype) === true;
}
