// help_chat_voice: answers from the agent's knowledge_base. The best passage is spoken briefly;
// when two articles score alike the caller is asked which one; when nothing matches the agent offers
// a human (a "yes" escalates). Escalation keywords work as in every agent.
import { containsPhrase, sentimentOf } from '../intent-matcher.js';
import { KnowledgeBase, shortAnswer, TIE_RATIO, type KbHit } from '../knowledge-base.js';
import type { AgentDefinition, Brain, BrainAction, BrainInput } from '../types.js';

const YES = ['yes', 'yeah', 'yep', 'sure', 'please', 'ok', 'okay'];
export const NO_MATCH_REPLY = "I couldn't find anything about that in our help articles. Would you like me to connect you to a person?";

export class HelpDeskBrain implements Brain {
  private readonly kb: KnowledgeBase;
  private offeredHuman = false;
  private choices: KbHit[] | null = null;
  private readonly heard: string[] = [];

  constructor(private readonly agent: AgentDefinition) {
    this.kb = new KnowledgeBase(agent.knowledgeBase);
  }

  checkpoint(): () => void {
    const saved = { offeredHuman: this.offeredHuman, choices: this.choices, heard: this.heard.length };
    return () => {
      this.offeredHuman = saved.offeredHuman;
      this.choices = saved.choices;
      this.heard.length = saved.heard;
    };
  }

  async *respond(input: BrainInput): AsyncIterable<BrainAction> {
    if (input.kind !== 'utterance') return;
    const text = input.text;
    this.heard.push(text);
    const esc = this.agent.escalation;
    const keyword = esc ? containsPhrase(text, esc.keywords) : null;
    if (keyword || (this.offeredHuman && containsPhrase(text, YES))) {
      this.offeredHuman = false;
      yield this.escalate(keyword ? `keyword: ${keyword}` : 'no help article matched');
      return;
    }
    this.offeredHuman = false;
    if (this.choices) {
      const pick = this.choices.find(
        (c) => this.kb.search(text, 5).some((h) => h.passage.title === c.passage.title) || text.toLowerCase().includes(c.passage.title.toLowerCase()),
      );
      this.choices = null;
      if (pick) {
        yield { kind: 'say', text: shortAnswer(pick.passage) };
        return;
      }
    }
    const [best, second] = this.kb.search(text);
    if (!best) {
      this.offeredHuman = true;
      yield { kind: 'say', text: NO_MATCH_REPLY };
      return;
    }
    if (second && second.score >= best.score * TIE_RATIO) {
      this.choices = [best, second];
      yield { kind: 'say', text: `Is your question about ${best.passage.title}, or about ${second.passage.title}?` };
      return;
    }
    yield { kind: 'say', text: shortAnswer(best.passage) };
  }

  private escalate(reason: string): BrainAction {
    return { kind: 'escalate', reason, summary: `Customer asked: ${this.heard.slice(-3).join(' / ')}`, sentiment: sentimentOf(this.heard) };
  }
}
