// Types of bench/chromium.js, so the TypeScript tests share its launch.
import type { BrowserContext } from 'playwright-core';

/** Where the browser is: CHROMIUM_PATH, else Debian's package. */
export declare const CHROMIUM_PATH: string;
/** Whether the browser is installed. */
export declare function chromiumAvailable(): boolean;
/** Launches the browser with a fresh profile; `close()` closes it and removes the profile. */
export declare function launchChromium(viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; close(): Promise<void> }>;
