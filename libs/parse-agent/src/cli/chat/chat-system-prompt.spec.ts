import { chatSystemPromptSettings } from './chat-system-prompt';
import { CliUsageError } from '../cli-settings';

const noFile = (): string => {
  throw new Error('no file should be read');
};

describe('chat system prompt settings', () => {
  it('keeps the default when nothing is set, blanks included', () => {
    expect(chatSystemPromptSettings({}, {}, noFile)).toEqual({});
    expect(
      chatSystemPromptSettings(
        {},
        { LLM_SYSTEM_PROMPT: ' ', LLM_SYSTEM_PROMPT_SUFFIX: '' },
        noFile,
      ),
    ).toEqual({});
  });

  it('reads the environment, and flags win over it', () => {
    const env = { LLM_SYSTEM_PROMPT: 'env prompt', LLM_SYSTEM_PROMPT_SUFFIX: 'env suffix' };
    expect(chatSystemPromptSettings({}, env, noFile)).toEqual({
      systemPrompt: 'env prompt',
      systemPromptSuffix: 'env suffix',
    });
    expect(
      chatSystemPromptSettings({ system: 'flag prompt', systemSuffix: 'flag suffix' }, env, noFile),
    ).toEqual({ systemPrompt: 'flag prompt', systemPromptSuffix: 'flag suffix' });
  });

  it('takes the replacement from --system-file', () => {
    const read = jest.fn(() => 'From the file.\n');
    expect(chatSystemPromptSettings({ systemFile: 'p.txt' }, {}, read)).toEqual({
      systemPrompt: 'From the file.',
    });
    expect(read).toHaveBeenCalledWith('p.txt');
  });

  it('refuses --system with --system-file, an unreadable file and an empty one, saying what to do', () => {
    expect(() => chatSystemPromptSettings({ system: 'a', systemFile: 'b' }, {}, noFile)).toThrow(
      new CliUsageError('Give --system or --system-file, not both: each replaces the prompt.'),
    );
    const missing = () => {
      throw Object.assign(new Error('nope'), { code: 'ENOENT' });
    };
    expect(() => chatSystemPromptSettings({ systemFile: 'gone.txt' }, {}, missing)).toThrow(
      '--system-file gone.txt: cannot read it (ENOENT).',
    );
    expect(() => chatSystemPromptSettings({ systemFile: 'e.txt' }, {}, () => '  \n')).toThrow(
      /e\.txt is empty; drop the flag to keep the default system prompt/,
    );
  });
});
