/**
 * Chat templates: how an OpenAI chat's messages become one prompt. A model names its template with the
 * config parameter `chat_template` (a file in the model's folder); without one, DEFAULT_CHAT_TEMPLATE.
 *
 * The language is deliberately tiny (a subset of Jinja's look, none of its power), so a template can
 * never run code, loop without bound or reach anything but the messages:
 * - text is copied as is;
 * - `{{ message.role }}`, `{{ message.content }}`: the current message's fields (inside the loop only);
 * - `{% for message in messages %}` ... `{% endfor %}`: the body once per message, no nesting;
 * - `{% if add_generation_prompt %}` ... `{% endif %}`: kept (the API always asks for the reply);
 * - `{#- ... -#}`-free: anything else between `{{ }}` or `{% %}` is a template error, at load time.
 * Output is bounded by the template's size times the messages' size.
 */
export const DEFAULT_CHAT_TEMPLATE = '{% for message in messages %}{{ message.role }}: {{ message.content }}\n{% endfor %}assistant:';

/** Most bytes a template file may have. */
export const MAX_TEMPLATE_BYTES = 64 * 1024;

export interface ChatMessage {
  readonly role: string;
  readonly content: string;
}

type Node =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'field'; readonly field: 'role' | 'content' }
  | { readonly kind: 'loop'; readonly body: readonly Node[] };

export class ChatTemplateError extends Error {}

const TAG = /\{\{\s*(.*?)\s*\}\}|\{%\s*(.*?)\s*%\}/gs;

export class ChatTemplate {
  private constructor(private readonly nodes: readonly Node[]) {}

  /** Parses `source`; throws ChatTemplateError naming what it does not understand. */
  static parse(source: string): ChatTemplate {
    if (source.length > MAX_TEMPLATE_BYTES) throw new ChatTemplateError(`a chat template may have at most ${MAX_TEMPLATE_BYTES} characters`);
    const top: Node[] = [];
    let loop: Node[] | undefined;
    const out = (): Node[] => loop ?? top;
    let last = 0;
    for (const match of source.matchAll(TAG)) {
      if (match.index > last) out().push({ kind: 'text', text: source.slice(last, match.index) });
      last = match.index + match[0].length;
      const expression = match[1];
      const statement = match[2];
      if (expression !== undefined) {
        if (loop === undefined) throw new ChatTemplateError(`'{{ ${expression} }}' outside '{% for message in messages %}'`);
        if (expression !== 'message.role' && expression !== 'message.content') {
          throw new ChatTemplateError(`unknown expression '{{ ${expression} }}' (only message.role and message.content)`);
        }
        loop.push({ kind: 'field', field: expression === 'message.role' ? 'role' : 'content' });
      } else if (statement === 'for message in messages') {
        if (loop !== undefined) throw new ChatTemplateError('loops cannot nest');
        loop = [];
      } else if (statement === 'endfor') {
        if (loop === undefined) throw new ChatTemplateError("'{% endfor %}' without a loop");
        top.push({ kind: 'loop', body: loop });
        loop = undefined;
      } else if (statement === 'if add_generation_prompt' || statement === 'endif') {
        // The generation prompt is always wanted: the tags go, what they enclose stays.
      } else {
        throw new ChatTemplateError(`unknown statement '{% ${String(statement)} %}'`);
      }
    }
    if (loop !== undefined) throw new ChatTemplateError("'{% for %}' without '{% endfor %}'");
    if (last < source.length) top.push({ kind: 'text', text: source.slice(last) });
    return new ChatTemplate(top);
  }

  render(messages: readonly ChatMessage[]): string {
    let text = '';
    for (const node of this.nodes) {
      if (node.kind === 'text') text += node.text;
      else if (node.kind === 'loop') {
        for (const message of messages) {
          for (const inner of node.body) {
            if (inner.kind === 'text') text += inner.text;
            else if (inner.kind === 'field') text += message[inner.field];
          }
        }
      }
    }
    return text;
  }
}
