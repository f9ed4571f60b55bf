// Browser and OS families of a reader's User-Agent: the few names a newsroom reads in a breakdown, never the agent.

/** Browser families, in the order a breakdown names them; `other` for anything unrecognised. */
export const BROWSER_FAMILIES = [
  'chrome',
  'safari',
  'firefox',
  'edge',
  'samsung',
  'opera',
  'yandex',
  'uc',
  'facebook',
  'instagram',
  'telegram',
  'snapchat',
  'tiktok',
  'linkedin',
  'webview',
  'other',
] as const;
export type BrowserFamily = (typeof BROWSER_FAMILIES)[number];

/** OS families; `other` for anything unrecognised. */
export const OS_FAMILIES = ['ios', 'android', 'windows', 'macos', 'linux', 'chromeos', 'other'] as const;
export type OsFamily = (typeof OS_FAMILIES)[number];

/** One agent's families. */
export interface AgentFamilies {
  browser: BrowserFamily;
  os: OsFamily;
}

/**
 * Markers tested in order, first match wins: in-app browsers first (they embed a Chrome or Safari token), then the
 * Chromium-based browsers that name themselves beside `Chrome/`, then Chrome, Firefox and Safari. iOS forces every
 * browser onto WebKit, so there each names itself by its own token (CriOS, FxiOS, EdgiOS, OPiOS).
 */
const BROWSER_RULES: readonly [RegExp, BrowserFamily][] = [
  [/\bFBAN\/|\bFBAV\/|\bFB_IAB\/|\[FB/, 'facebook'],
  [/\bInstagram\b/, 'instagram'],
  [/\bTelegram(?:-Android|Bot)?\b/i, 'telegram'],
  [/\bSnapchat\b/, 'snapchat'],
  [/musical_ly|BytedanceWebview|\bTikTok\b|\btrill_/, 'tiktok'],
  [/\bLinkedInApp\b/, 'linkedin'],
  [/\bEdg(?:e|A|iOS)?\//, 'edge'],
  [/\bSamsungBrowser\//, 'samsung'],
  [/\bOPR\/|\bOPiOS\/|\bOpera\b|\bOPT\//, 'opera'],
  [/\bYaBrowser\/|\bYaApp_/, 'yandex'],
  [/\bUCBrowser\/|\bUCWEB\b/, 'uc'],
  [/; wv\)/, 'webview'],
  [/\bCriOS\/|\bChrome\/|\bChromium\//, 'chrome'],
  [/\bFirefox\/|\bFxiOS\//, 'firefox'],
  [/\bVersion\/[\d.]+(?: Mobile\/\w+)? Safari\//, 'safari'],
];

const OS_RULES: readonly [RegExp, OsFamily][] = [
  [/\biPhone\b|\biPad\b|\biPod\b|\biOS\b/, 'ios'],
  [/\bAndroid\b/, 'android'],
  [/\bCrOS\b/, 'chromeos'],
  [/\bWindows\b/, 'windows'],
  [/\bMacintosh\b|\bMac OS X\b/, 'macos'],
  [/\bLinux\b|\bX11\b|\bUbuntu\b|\bFedora\b/, 'linux'],
];

/**
 * The browser and OS families of a User-Agent (as the browser sends it). An iOS WebKit view that names no browser
 * (an app's own view) is `webview`, as Android's `; wv)` is; a bare desktop Safari needs `Version/… Safari/`.
 */
export function agentFamilies(userAgent: string): AgentFamilies {
  let os: OsFamily = 'other';
  for (const [pattern, family] of OS_RULES) {
    if (pattern.test(userAgent)) {
      os = family;
      break;
    }
  }
  let browser: BrowserFamily = 'other';
  for (const [pattern, family] of BROWSER_RULES) {
    if (pattern.test(userAgent)) {
      browser = family;
      break;
    }
  }
  if (browser === 'other' && os === 'ios' && /\bAppleWebKit\/.*\bMobile\/\w+/.test(userAgent))
    browser = 'webview';
  return { browser, os };
}

/** A pair of families as one small number (browser major), and back: how the click buffer keys and stores them. */
export function familyIndex(f: AgentFamilies): number {
  return BROWSER_FAMILIES.indexOf(f.browser) * OS_FAMILIES.length + OS_FAMILIES.indexOf(f.os);
}

export function familiesOfIndex(index: number): AgentFamilies {
  return {
    browser: BROWSER_FAMILIES[Math.floor(index / OS_FAMILIES.length)]!,
    os: OS_FAMILIES[index % OS_FAMILIES.length]!,
  };
}
