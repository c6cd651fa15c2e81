// Custom SIP headers a client may set (SPEC "routing.sip.headers", dial `headers`): only X- names,
// so a client can never override the headers the user agent owns (Via, From, Contact, …).
export const CUSTOM_SIP_HEADER_PATTERN = '^X-[A-Za-z0-9-]+$';
const CUSTOM_SIP_HEADER = new RegExp(CUSTOM_SIP_HEADER_PATTERN);

export function isCustomSipHeader(name: string): boolean {
  return CUSTOM_SIP_HEADER.test(name);
}

/** The first header name that is not a custom X- header, or undefined. */
export function firstDisallowedHeader(headers: Record<string, unknown> | undefined): string | undefined {
  return Object.keys(headers ?? {}).find((name) => !isCustomSipHeader(name));
}

export const disallowedHeaderMessage = (name: string): string => `Only custom SIP headers starting with 'X-' may be set; '${name}' is not allowed.`;
