// The session modes of SPEC "Create-session request fields": one list that the session pipeline
// plans from and the API validates against (its schemas build their enums from SESSION_MODES).

export const SESSION_MODES = ['bidirectional_translation', 'assistive_translation', 'ai_agent', 'help_chat_voice'] as const;
export type SessionMode = (typeof SESSION_MODES)[number];

export const isSessionMode = (mode: string): mode is SessionMode => (SESSION_MODES as readonly string[]).includes(mode);

/** Modes in which two people talk through translation (no agent). */
export const TRANSLATION_MODES: ReadonlySet<string> = new Set<SessionMode>(['bidirectional_translation', 'assistive_translation']);
/** Modes in which an AI agent takes part. */
export const AGENT_MODES: ReadonlySet<string> = new Set<SessionMode>(['ai_agent', 'help_chat_voice']);
