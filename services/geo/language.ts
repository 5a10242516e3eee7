import { HL_CODES } from '../../contracts/googleParams.js';

const hlCodes = new Set<string>(HL_CODES);

/** Where Google's `hl` names a language differently from CLDR/BCP 47. */
const GOOGLE_NAMES: Record<string, string> = { fil: 'tl', he: 'iw', jv: 'jw', nb: 'no' };

/**
 * The main language of a country as Google's `hl`: CLDR's likely-subtags data (which Node ships in ICU) gives the
 * territory's most likely language, e.g. und-CH → de, und-IN → hi, und-TW → zh-Hant. Regional variants that Google
 * distinguishes (pt-br / pt-pt, zh-cn / zh-tw) keep their region; a language Google's interface lacks falls back to en.
 */
export const mainLanguageHl = (countryCode: string): string => {
  let locale: Intl.Locale;
  try {
    locale = new Intl.Locale(`und-${countryCode.toUpperCase()}`).maximize();
  } catch {
    return 'en';
  }
  const language = GOOGLE_NAMES[locale.language] ?? locale.language;
  if (language === 'zh') return locale.script === 'Hant' ? 'zh-tw' : 'zh-cn';
  if (language === 'pt') return countryCode.toUpperCase() === 'BR' ? 'pt-br' : 'pt-pt';
  return hlCodes.has(language) ? language : 'en';
};
