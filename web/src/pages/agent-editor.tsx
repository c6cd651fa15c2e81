// Create or edit an agent field by field: greeting and instructions, the brain, intents (example
// phrases, reply, tool, escalate, end), tools (webhook URL, JSON Schema parameters), escalation
// (keywords, message, transfer target) and the knowledge base. Saving calls POST/PATCH /v1/agents
// with the cookie; the API's validation message is shown at the field its `param` names.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { api, unwrap, CallError } from '../api/client';
import { ErrorBox } from '../components/states';
import {
  bodyOf,
  DraftError,
  fieldOf,
  NEW_ARTICLE,
  NEW_INTENT,
  NEW_TOOL,
  type AgentDraft,
  type AgentObject,
  type ArticleDraft,
  type IntentDraft,
  type ToolDraft,
} from './agent-draft';

const idOf = (param: string) => `af-${param.replace(/\./g, '-')}`;

function knownFields(d: AgentDraft): Set<string> {
  const f = ['name', 'description', 'language', 'greeting', 'instructions', 'brain', 'brain.provider', 'brain.model', 'brain.base_url', 'brain.api_key_secret'];
  f.push('intents', 'tools', 'knowledge_base', 'escalation', 'escalation.keywords', 'escalation.message', 'escalation.transfer_to');
  d.intents.forEach((_, i) => f.push(...['', '.name', '.examples', '.reply', '.tool', '.escalate', '.end_call'].map((s) => `intents.${i}${s}`)));
  d.tools.forEach((_, i) => f.push(...['', '.name', '.description', '.webhook_url', '.parameters'].map((s) => `tools.${i}${s}`)));
  d.knowledge_base.forEach((_, i) => f.push(...['', '.title', '.content'].map((s) => `knowledge_base.${i}${s}`)));
  return new Set(f);
}

export function AgentEditor({ initial, onSaved, onCancel }: { initial: AgentDraft; onSaved: (a: AgentObject) => void; onCancel: () => void }) {
  const [d, setD] = useState<AgentDraft>(initial);
  const [error, setError] = useState<unknown>();
  const [saving, setSaving] = useState(false);
  const form = useRef<HTMLFormElement>(null);

  const set = <K extends keyof AgentDraft>(k: K, v: AgentDraft[K]) => setD((x) => ({ ...x, [k]: v }));
  const setItem = <K extends 'intents' | 'tools' | 'knowledge_base'>(k: K, i: number, patch: Partial<AgentDraft[K][number]>) =>
    setD((x) => ({ ...x, [k]: (x[k] as AgentDraft[K][number][]).map((it, n) => (n === i ? { ...it, ...patch } : it)) }));
  const addItem = <K extends 'intents' | 'tools' | 'knowledge_base'>(k: K, item: AgentDraft[K][number]) =>
    setD((x) => ({ ...x, [k]: [...(x[k] as AgentDraft[K][number][]), { ...item }] }));
  const removeItem = (k: 'intents' | 'tools' | 'knowledge_base', i: number) => setD((x) => ({ ...x, [k]: (x[k] as unknown[]).filter((_, n) => n !== i) }));

  const param = error instanceof CallError || error instanceof DraftError ? error.param : undefined;
  const bad = fieldOf(param, knownFields(d));
  const message = error instanceof Error ? error.message : undefined;

  // Move the keyboard to the field the API complained about.
  useEffect(() => {
    if (bad) form.current?.querySelector<HTMLElement>(`#${idOf(bad)}`)?.focus();
  }, [error]);

  const save = async (e: Event) => {
    e.preventDefault();
    setSaving(true);
    try {
      const body = bodyOf(d);
      const saved = d.id
        ? await unwrap(api.PATCH('/v1/agents/{id}', { params: { path: { id: d.id } }, body }))
        : await unwrap(api.POST('/v1/agents', { body }));
      setError(undefined);
      onSaved(saved);
    } catch (err) {
      setError(err);
    } finally {
      setSaving(false);
    }
  };

  /** A label, its control and, when the API named this field, the message under it. */
  const field = (
    p: string,
    label: string,
    control: (a: { id: string; 'aria-invalid': boolean; 'aria-describedby'?: string }) => ComponentChildren,
    hint?: string,
  ) => (
    <div class="field">
      <label for={idOf(p)}>{label}</label>
      {hint ? (
        <small id={`${idOf(p)}-hint`} class="state">
          {hint}
        </small>
      ) : null}
      {control({
        id: idOf(p),
        'aria-invalid': bad === p,
        'aria-describedby': bad === p ? `${idOf(p)}-err` : hint ? `${idOf(p)}-hint` : undefined,
      })}
      {bad === p ? (
        <p class="field-error" id={`${idOf(p)}-err`} role="alert">
          {message}
        </p>
      ) : null}
    </div>
  );
  const text = (p: string, label: string, value: string, onInput: (v: string) => void, extra: Record<string, unknown> = {}, hint?: string) =>
    field(p, label, (a) => <input {...a} {...extra} value={value} onInput={(e) => onInput((e.currentTarget as HTMLInputElement).value)} />, hint);
  const area = (p: string, label: string, value: string, onInput: (v: string) => void, rows = 3, hint?: string) =>
    field(p, label, (a) => <textarea {...a} rows={rows} value={value} onInput={(e) => onInput((e.currentTarget as HTMLTextAreaElement).value)} />, hint);
  const sectionError = (p: string) =>
    bad === p ? (
      <p class="field-error" id={`${idOf(p)}-err`} role="alert" tabIndex={-1}>
        {message}
      </p>
    ) : null;

  const intent = (it: IntentDraft, i: number) => (
    <fieldset class="item" key={`intent-${i}`} id={idOf(`intents.${i}`)} tabIndex={-1}>
      <legend>Intent {i + 1}</legend>
      {sectionError(`intents.${i}`)}
      {text(`intents.${i}.name`, 'Intent name', it.name, (v) => setItem('intents', i, { name: v }), {}, 'Letters, digits, _ . - (at most 64).')}
      {area(`intents.${i}.examples`, 'Example phrases (one per line)', it.examples, (v) => setItem('intents', i, { examples: v }), 3)}
      {area(`intents.${i}.reply`, 'Response', it.reply, (v) => setItem('intents', i, { reply: v }), 2)}
      {field(`intents.${i}.tool`, 'Tool to call', (a) => (
        <select {...a} value={it.tool} onChange={(e) => setItem('intents', i, { tool: (e.currentTarget as HTMLSelectElement).value })}>
          <option value="">none</option>
          {d.tools.map((t, n) => (
            <option key={n} value={t.name}>
              {t.name || `tool ${n + 1} (unnamed)`}
            </option>
          ))}
          {it.tool && !d.tools.some((t) => t.name === it.tool) ? <option value={it.tool}>{it.tool} (not a tool of this agent)</option> : null}
        </select>
      ))}
      <label class="check">
        <input type="checkbox" checked={it.escalate} onChange={(e) => setItem('intents', i, { escalate: (e.currentTarget as HTMLInputElement).checked })} />{' '}
        Hand over to a human after replying
      </label>
      <label class="check">
        <input type="checkbox" checked={it.end_call} onChange={(e) => setItem('intents', i, { end_call: (e.currentTarget as HTMLInputElement).checked })} /> End
        the session after replying
      </label>
      <div>
        <button type="button" class="secondary" onClick={() => removeItem('intents', i)}>
          Remove intent {i + 1}
        </button>
      </div>
    </fieldset>
  );

  const tool = (t: ToolDraft, i: number) => (
    <fieldset class="item" key={`tool-${i}`} id={idOf(`tools.${i}`)} tabIndex={-1}>
      <legend>Tool {i + 1}</legend>
      {sectionError(`tools.${i}`)}
      {text(`tools.${i}.name`, 'Tool name', t.name, (v) => setItem('tools', i, { name: v }))}
      {text(`tools.${i}.description`, 'Tool description', t.description, (v) => setItem('tools', i, { description: v }))}
      {text(`tools.${i}.webhook_url`, 'Webhook URL', t.webhook_url, (v) => setItem('tools', i, { webhook_url: v }), { type: 'url', placeholder: 'https://…' })}
      {area(
        `tools.${i}.parameters`,
        'Parameters (JSON Schema)',
        t.parameters,
        (v) => setItem('tools', i, { parameters: v }),
        5,
        'The arguments the agent passes, as a JSON Schema whose type is "object".',
      )}
      <button type="button" class="secondary" onClick={() => removeItem('tools', i)}>
        Remove tool {i + 1}
      </button>
    </fieldset>
  );

  const article = (k: ArticleDraft, i: number) => (
    <fieldset class="item" key={`kb-${i}`} id={idOf(`knowledge_base.${i}`)} tabIndex={-1}>
      <legend>Article {i + 1}</legend>
      {sectionError(`knowledge_base.${i}`)}
      {text(`knowledge_base.${i}.title`, 'Article title', k.title, (v) => setItem('knowledge_base', i, { title: v }))}
      {area(`knowledge_base.${i}.content`, 'Article text', k.content, (v) => setItem('knowledge_base', i, { content: v }), 4)}
      <button type="button" class="secondary" onClick={() => removeItem('knowledge_base', i)}>
        Remove article {i + 1}
      </button>
    </fieldset>
  );

  return (
    <form class="card agent-editor" onSubmit={save} ref={form} aria-labelledby="agent-form" noValidate>
      <h2 id="agent-form">{d.id ? `Edit ${initial.name}` : 'New agent'}</h2>
      {d.id ? (
        <p>
          <code>{d.id}</code>
        </p>
      ) : null}
      {text('name', 'Name', d.name, (v) => set('name', v))}
      {text('description', 'Description', d.description, (v) => set('description', v))}
      {text('language', 'Language', d.language, (v) => set('language', v), { maxLength: 8 }, 'ISO 639-1 code, e.g. en, es.')}
      {area('greeting', 'Greeting', d.greeting, (v) => set('greeting', v), 2, 'The first thing the agent says.')}
      {area('instructions', 'Instructions', d.instructions, (v) => set('instructions', v), 3, 'System prompt for an LLM brain; notes for a scripted one.')}

      <fieldset id={idOf('brain')} tabIndex={-1}>
        <legend>Brain</legend>
        {sectionError('brain')}
        {field('brain.provider', 'Provider', (a) => (
          <select {...a} value={d.provider} onChange={(e) => set('provider', (e.currentTarget as HTMLSelectElement).value as AgentDraft['provider'])}>
            <option value="scripted">scripted (intents below)</option>
            <option value="openai_compatible">openai_compatible (LLM with tool calling)</option>
          </select>
        ))}
        {d.provider === 'openai_compatible' ? (
          <>
            {text('brain.model', 'Model', d.model, (v) => set('model', v))}
            {text('brain.base_url', 'Base URL', d.base_url, (v) => set('base_url', v), { type: 'url', placeholder: 'https://api.example.com/v1' })}
          </>
        ) : null}
        {text(
          'brain.api_key_secret',
          'API key secret name',
          d.api_key_secret,
          (v) => set('api_key_secret', v),
          {},
          'Name of an organization secret (never the key).',
        )}
      </fieldset>

      <h3>Intents</h3>
      {sectionError('intents')}
      {d.intents.length === 0 ? <p class="state empty">No intents: the agent answers with its fallback.</p> : null}
      {d.intents.map(intent)}
      <button type="button" class="secondary" onClick={() => addItem('intents', NEW_INTENT)}>
        Add intent
      </button>

      <h3>Tools</h3>
      {sectionError('tools')}
      {d.tools.length === 0 ? <p class="state empty">No tools.</p> : null}
      {d.tools.map(tool)}
      <button type="button" class="secondary" onClick={() => addItem('tools', NEW_TOOL)}>
        Add tool
      </button>

      <h3>Escalation</h3>
      <label class="check">
        <input type="checkbox" checked={d.escalation} onChange={(e) => set('escalation', (e.currentTarget as HTMLInputElement).checked)} /> Hand over to a human
        on request
      </label>
      {sectionError('escalation')}
      {d.escalation ? (
        <>
          {area('escalation.keywords', 'Escalation keywords (one per line)', d.keywords, (v) => set('keywords', v), 3, 'Phrases that ask for a human.')}
          {text('escalation.message', 'Escalation message', d.escalation_message, (v) => set('escalation_message', v))}
          {text(
            'escalation.transfer_to',
            'Transfer to',
            d.transfer_to,
            (v) => set('transfer_to', v),
            { placeholder: '+14155550100 or sip:desk@pbx.example' },
            'E.164 number or SIP URI.',
          )}
        </>
      ) : null}

      <h3>Knowledge base</h3>
      {sectionError('knowledge_base')}
      {d.knowledge_base.length === 0 ? <p class="state empty">No articles.</p> : null}
      {d.knowledge_base.map(article)}
      <button type="button" class="secondary" onClick={() => addItem('knowledge_base', NEW_ARTICLE)}>
        Add article
      </button>

      {error && !bad ? <ErrorBox error={error} /> : null}
      {bad ? (
        <p class="state error" data-testid="agent-error-summary">
          Not saved: {message}
        </p>
      ) : null}
      <div>
        <button type="submit" disabled={saving}>
          {saving ? 'Saving…' : 'Save agent'}
        </button>{' '}
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
