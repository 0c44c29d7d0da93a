import { redactedEndpoint } from './probe';

describe('redactedEndpoint', () => {
  it('keeps scheme, host, port and path, never credentials or the query', () => {
    expect(redactedEndpoint('https://user:s3cret@parse.example.com:8443/parse/?x=1')).toBe(
      'https://parse.example.com:8443/parse',
    );
    expect(redactedEndpoint('mongodb://agent:pw@127.0.0.1:27017/db?authSource=admin')).toBe(
      'mongodb://127.0.0.1:27017/db',
    );
    expect(redactedEndpoint('not a url')).toBe('(an unparsable URL)');
  });
});
