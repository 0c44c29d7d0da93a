import type { DataPathDescriptor } from '../data-path-descriptor';
import { hasScheme, schemesText } from '../data-path-descriptor';
import { isPlainObject } from '../../core/plain-object';
import { createMongoDataPathProvider, type MongoPathOptions } from './create-mongo-data-path';
import { probeMongo } from './mongo-probe';

const SCHEMES = ['mongodb:', 'mongodb+srv:'] as const;

/** The direct MongoDB path (Parse-on-MongoDB), described once for every host. */
export const mongoDataPath: DataPathDescriptor<'mongo', MongoPathOptions> = {
  kind: 'mongo',
  label: 'MongoDB',
  parseDatabase: 'mongo',
  uri: { env: 'MONGODB_URI', flag: '--mongodb-uri', schemes: SCHEMES },
  handleKey: 'client',
  fromUri: (uri) => ({ uri }),
  validate(option) {
    if (!isPlainObject(option) || (!option.uri && !option.client)) {
      return ['mongo needs a uri or a client.'];
    }
    if (typeof option.uri === 'string' && !hasScheme(option.uri, SCHEMES)) {
      return [`mongo.uri must start with ${schemesText(SCHEMES)}.`];
    }
    return [];
  },
  open(option, parts) {
    // The driver is loaded and connected on first use, so boot never waits on MongoDB.
    const provider = createMongoDataPathProvider(option, parts.parse);
    return {
      kind: 'mongo',
      provider,
      probe: (timeoutMs) => probeMongo((signal) => provider.probe(signal), option.uri, timeoutMs),
      close: () => provider.close(),
    };
  },
};
