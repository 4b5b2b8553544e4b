import { describe, expect, it } from 'vitest';
import { TOKEN_STREAM_CHAT_TEMPLATE } from '../../example-models/token-stream.js';
import { ChatTemplate, ChatTemplateError, DEFAULT_CHAT_TEMPLATE, MAX_TEMPLATE_BYTES } from './chat-template.js';

const messages = [
  { role: 'system', content: 'be brief' },
  { role: 'user', content: 'hi {{ message.role }}' },
];

describe('ChatTemplate', () => {
  it('renders the default template: one line per message, then the assistant cue', () => {
    expect(ChatTemplate.parse(DEFAULT_CHAT_TEMPLATE).render(messages)).toBe('system: be brief\nuser: hi {{ message.role }}\nassistant:');
  });

  it("renders token_stream's template, keeping what add_generation_prompt encloses", () => {
    const template = ChatTemplate.parse(`{% if add_generation_prompt %}>{% endif %}${TOKEN_STREAM_CHAT_TEMPLATE}`);
    expect(template.render(messages.slice(0, 1))).toBe('><|system|>\nbe brief\n<|assistant|>\n');
  });

  it('refuses anything beyond the language, at parse time', () => {
    const bad = [
      '{{ message.role }}',
      '{% for message in messages %}{{ message.__class__ }}{% endfor %}',
      '{% for m in messages %}{% endfor %}',
      '{% for message in messages %}{% for message in messages %}{% endfor %}{% endfor %}',
      '{% endfor %}',
      '{% for message in messages %}',
      '{% set x = 1 %}',
      "{{ ''.join(x) }}",
      'x'.repeat(MAX_TEMPLATE_BYTES + 1),
    ];
    for (const source of bad) expect(() => ChatTemplate.parse(source), source.slice(0, 40)).toThrow(ChatTemplateError);
  });
});
