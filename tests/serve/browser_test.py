#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Drives nmtzoo-serve's web page in headless Chromium (selenium + chromedriver, Debian's).

  tests/serve/browser_test.py --port P --text-file IN --expect-file OUT --screenshot PNG
                              [--phone-screenshot PNG]

Uses the page as a person would, and checks what the DOM shows:
- the language menus: the source menu lists /languages' languages that have targets, the target
  menu the chosen source's targets; it picks the first model's pair (/v1/models); swap is enabled
  exactly when the reverse direction exists (and then swaps the menus and back);
- types IN's text without clicking anything: the character count follows (with /frontend/settings'
  charLimit when the server gives one), and the translation appears once typing pauses (debounced:
  fewer requests than keystrokes); it must equal OUT's text (the API's answer for beam 5, 3-best);
- under the first sentence, the n-best toggle shows a list of 2 or more hypotheses and the attention
  toggle an SVG heatmap (each sentence has its attention toggle); the copy button copies;
- Ctrl+Enter translates the unchanged text again at once (one request, no newline typed, nothing
  more once the debounce delay has passed), and the open toggles stay open;
- desktop (1280x800): the panes are side by side; phone (390x844, mobile emulation): they stack,
  the language bar fits, and nothing overflows horizontally.
Saves the desktop screenshot (first sentence's toggles open) to --screenshot, the phone one to
--phone-screenshot when given. Exit status 0 when everything holds, 1 with the reasons otherwise;
77 when selenium or Chromium is missing (the caller decides whether that may skip).
"""
import argparse
import json
import sys
import time
import urllib.error
import urllib.request

try:
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError as e:
    print(f"selenium is missing: {e}", file=sys.stderr)
    sys.exit(77)


class Failure(Exception):
    """A check that the rest of the test depends on failed."""


def get_json(url, default=None):
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return json.load(response)
    except urllib.error.HTTPError:
        if default is None:
            raise
        return default


def normalize(text):  # the DOM's innerText trims and folds spaces
    return [" ".join(line.split()) for line in text.split("\n")]


def start_chromium():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,900"):
        options.add_argument(flag)
    try:
        return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    except Exception as e:  # selenium wraps a missing binary in several exception types
        print(f"cannot start Chromium: {e}", file=sys.stderr)
        sys.exit(77)


class PageTest:
    def __init__(self, driver, args):
        self.driver = driver
        self.args = args
        self.problems = []
        self.base = f"http://127.0.0.1:{args.port}"

    def check(self, ok, message):
        if not ok:
            self.problems.append(message)
        return ok

    def wait_for(self, what, condition, timeout=60, seen=None):
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.1).until(lambda d: condition())
        except TimeoutException:
            raise Failure(f"timed out after {timeout} s waiting for {what}" + (f": {seen()}" if seen else "")) from None

    def seen(self):
        return (f"the page shows {self.shown_translation()!r} (state {self.state()!r}, "
                f"error {self.by_id('error').text!r}), expected {self.args.expect!r}")

    def by_id(self, element_id):
        return self.driver.find_element(By.ID, element_id)

    def js(self, script, *arguments):
        return self.driver.execute_script(script, *arguments)

    def state(self):
        return self.js("return document.body.dataset.state || ''")

    def requests(self):
        return int(self.js("return document.body.dataset.requests || '0'"))

    def menu(self, element_id):
        return [o.get_attribute("value") for o in Select(self.by_id(element_id)).options]

    def shown_translation(self):
        return "\n".join(p.text for p in self.driver.find_elements(By.CSS_SELECTOR, "#translation .sentence .text"))

    def rect(self, element_id):
        return self.js("const r = arguments[0].getBoundingClientRect();"
                       "return {left: r.left, right: r.right, top: r.top, bottom: r.bottom};", self.by_id(element_id))

    def run(self):
        args = self.args
        languages = get_json(self.base + "/languages")
        models = get_json(self.base + "/v1/models")
        settings = get_json(self.base + "/frontend/settings", default={})
        char_limit = settings.get("charLimit", 0) if isinstance(settings, dict) else 0
        delay_s = (settings.get("frontendTimeout", 500) if isinstance(settings, dict) else 500) / 1000
        targets = {l["code"]: l.get("targets", []) for l in languages}
        source, target = models[0]["source"], models[0]["target"]

        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
        self.driver.get(self.base + "/")
        self.wait_for("the language menus to be filled",
                      lambda: self.state() == "ready" and self.menu("source-lang") and self.menu("target-lang"))

        # The languages, as a person picks them.
        sources = [l["code"] for l in languages if l.get("targets")]
        self.check(sorted(self.menu("source-lang")) == sorted(sources),
                   f"the source menu offers {self.menu('source-lang')}, /languages has sources {sources}")
        Select(self.by_id("source-lang")).select_by_value(source)
        self.check(sorted(self.menu("target-lang")) == sorted(targets[source]),
                   f"the target menu offers {self.menu('target-lang')} for '{source}', /languages has {targets[source]}")
        Select(self.by_id("target-lang")).select_by_value(target)
        reverse = source in targets.get(target, [])
        swap = self.by_id("swap")
        self.check(swap.is_enabled() == reverse,
                   f"swap is {'enabled' if swap.is_enabled() else 'disabled'} but {target}->{source} "
                   f"{'exists' if reverse else 'does not exist'}")
        if reverse and swap.is_enabled():
            swap.click()
            swapped = (Select(self.by_id("source-lang")).first_selected_option.get_attribute("value"),
                       Select(self.by_id("target-lang")).first_selected_option.get_attribute("value"))
            self.check(swapped == (target, source), f"after swap the menus show {swapped}")
            swap.click()
        chosen = (self.by_id("source-lang").get_attribute("value"), self.by_id("target-lang").get_attribute("value"))
        if chosen != (source, target):
            raise Failure(f"the menus show {chosen}, expected {(source, target)}")

        desktop_source, desktop_target = self.rect("source-pane"), self.rect("target-pane")
        self.check(desktop_source["right"] <= desktop_target["left"] and
                   abs(desktop_source["top"] - desktop_target["top"]) < 2,
                   f"on a desktop the panes are not side by side: {desktop_source}, {desktop_target}")

        # Typing translates once the typing pauses: no click.
        box = self.by_id("source")
        box.click()
        box.send_keys(args.text)
        self.wait_for("the translation to appear as typed (debounced, no click)",
                      lambda: self.state() == "done" and normalize(self.shown_translation()) == normalize(args.expect),
                      seen=self.seen)
        typed = self.requests()
        self.check(1 <= typed < len(args.text), f"{typed} requests for {len(args.text)} keystrokes: not debounced")
        count = self.by_id("count").text
        expected_count = f"{len(args.text)} / {char_limit}" if char_limit and char_limit > 0 else f"{len(args.text)} characters"
        self.check(count == expected_count, f"the character count shows {count!r}, expected {expected_count!r}")

        # The toggles under each sentence.
        lines = args.text.count("\n") + 1
        sentences = self.driver.find_elements(By.CSS_SELECTOR, "#translation .sentence")
        self.check(len(sentences) == lines, f"{len(sentences)} sentences shown for {lines} lines")
        heatmap_toggles = self.driver.find_elements(By.CSS_SELECTOR, "#translation .sentence .heatmap-toggle")
        self.check(len(heatmap_toggles) == lines, f"{len(heatmap_toggles)} attention toggles for {lines} lines")
        first = sentences[0]
        nbest = first.find_element(By.CSS_SELECTOR, ".nbest")
        heatmap = first.find_element(By.CSS_SELECTOR, ".heatmap")
        self.check(not nbest.is_displayed() and not heatmap.is_displayed(),
                   "the n-best list and the heatmap show before their toggles are clicked")
        first.find_element(By.CSS_SELECTOR, ".nbest-toggle").click()
        hypotheses = [li for li in nbest.find_elements(By.TAG_NAME, "li") if li.is_displayed()]
        self.check(len(hypotheses) >= 2, f"the first sentence's n-best toggle shows {len(hypotheses)} hypotheses")
        first.find_element(By.CSS_SELECTOR, ".heatmap-toggle").click()
        svgs = heatmap.find_elements(By.TAG_NAME, "svg")
        self.check(len(svgs) == 1 and svgs[0].is_displayed(), "the attention toggle shows no SVG heatmap")
        first.find_element(By.CSS_SELECTOR, ".nbest-toggle").click()
        self.check(not nbest.is_displayed(), "a second click on the n-best toggle leaves the list shown")
        first.find_element(By.CSS_SELECTOR, ".nbest-toggle").click()

        # Copy.
        copy = self.by_id("copy")
        if self.check(copy.is_displayed() and copy.is_enabled(), "no enabled copy button beside the translation"):
            copy.click()
            label = self.wait_for("the copy button's answer", lambda: copy.text != "Copy" and copy.text, timeout=10)
            self.check(label == "Copied", f"the copy button says {label!r}")

        # Ctrl+Enter in the text box: at once, once, without typing a newline.
        box.click()
        ActionChains(self.driver).key_down(Keys.CONTROL).send_keys(Keys.ENTER).key_up(Keys.CONTROL).perform()
        self.wait_for("Ctrl+Enter to translate", lambda: self.requests() == typed + 1 and self.state() == "done",
                      seen=lambda: f"{self.requests() - typed} requests since; " + self.seen())
        time.sleep(delay_s + 0.5)
        self.check(self.requests() == typed + 1,
                   f"Ctrl+Enter sent {self.requests() - typed} requests, expected 1")
        self.check(box.get_attribute("value") == args.text, "Ctrl+Enter changed the text")
        self.check(normalize(self.shown_translation()) == normalize(args.expect),
                   f"after Ctrl+Enter the page shows {self.shown_translation()!r}, expected {args.expect!r}")
        first = self.driver.find_element(By.CSS_SELECTOR, "#translation .sentence")
        self.check(first.find_element(By.CSS_SELECTOR, ".nbest").is_displayed() and
                   first.find_element(By.CSS_SELECTOR, ".heatmap").is_displayed(),
                   "the first sentence's toggles closed when it was translated again")
        self.driver.save_screenshot(args.screenshot)

        # A phone: the panes stack and nothing is wider than the screen.
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True})
        time.sleep(0.5)
        width = self.js("return window.innerWidth")
        self.check(width == 390, f"the phone viewport is {width} px wide, expected 390")
        phone_source, phone_target = self.rect("source-pane"), self.rect("target-pane")
        self.check(phone_source["bottom"] <= phone_target["top"] and abs(phone_source["left"] - phone_target["left"]) < 2,
                   f"on a phone the panes do not stack: {phone_source}, {phone_target}")
        scroll_width = self.js("return document.documentElement.scrollWidth")
        self.check(scroll_width <= width, f"on a phone the page is {scroll_width} px wide for a {width} px screen")
        for element_id in ("source-lang", "swap", "target-lang", "source-pane", "target-pane", "copy"):
            r = self.rect(element_id)
            self.check(0 <= r["left"] and r["right"] <= width, f"on a phone #{element_id} spans {r['left']}..{r['right']} px")
        if args.phone_screenshot:
            self.driver.save_screenshot(args.phone_screenshot)
        return f"{len(hypotheses)} hypotheses, {len(heatmap_toggles)} heatmaps, {typed} requests while typing"


def run_keyed(driver, args):
    """On a server with API keys: the page shows a key field, translates once the key is typed,
    and remembers it. Returns the problems found."""
    base = f"http://127.0.0.1:{args.keyed_port}"
    driver.get(base + "/")
    driver.execute_script("localStorage.clear()")
    driver.get(base + "/")
    state = lambda: driver.execute_script("return document.body.dataset.state || ''")
    shown = lambda: "\n".join(p.text for p in driver.find_elements(By.CSS_SELECTOR, "#translation .sentence .text"))
    error = lambda: driver.find_element(By.ID, "error").text
    try:
        WebDriverWait(driver, 60, poll_frequency=0.1).until(lambda d: state() == "ready")
        field = driver.find_element(By.ID, "api-key")
        if not field.is_displayed():
            return ["a keyed server's page shows no API key field"]
        box = driver.find_element(By.ID, "source")
        box.send_keys(args.text)
        WebDriverWait(driver, 60, poll_frequency=0.1).until(lambda d: state() == "error")
        field.send_keys(args.api_key)
        WebDriverWait(driver, 60, poll_frequency=0.1).until(
            lambda d: state() == "done" and normalize(shown()) == normalize(args.expect))
        driver.get(base + "/")
        WebDriverWait(driver, 60, poll_frequency=0.1).until(lambda d: state() in ("ready", "done"))
        kept = driver.find_element(By.ID, "api-key").get_attribute("value")
        if kept != args.api_key:
            return [f"after a reload the keyed page's key field holds {kept!r}: the key was not kept"]
    except TimeoutException:
        return [f"the keyed page: state {state()!r}, error {error()!r}, shows {shown()!r}, expected {args.expect!r}"]
    return []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--text-file", required=True)
    parser.add_argument("--expect-file", required=True)
    parser.add_argument("--screenshot", required=True, help="the desktop screenshot (PNG)")
    parser.add_argument("--phone-screenshot", help="the phone screenshot (PNG)")
    parser.add_argument("--keyed-port", type=int, help="a server of the same model with serve.api_keys")
    parser.add_argument("--api-key", help="one of its keys")
    args = parser.parse_args()
    with open(args.text_file, encoding="utf-8") as f:
        args.text = f.read()
    with open(args.expect_file, encoding="utf-8") as f:
        args.expect = f.read()
    driver = start_chromium()
    test = PageTest(driver, args)
    try:
        summary = test.run()
        if args.keyed_port:
            test.problems += run_keyed(driver, args)
    except Failure as e:
        test.problems.append(str(e))
    except Exception as e:  # an element missing, a script error: the page is not what the test expects
        test.problems.append(f"{type(e).__name__}: {e}".strip())
    finally:
        try:
            if test.problems:
                driver.save_screenshot(args.screenshot)  # what the page showed when it failed
        except Exception:
            pass
        driver.quit()
    if test.problems:
        print("; ".join(test.problems), file=sys.stderr)
        sys.exit(1)
    print(f"browser: {args.expect!r} shown; {summary}")


if __name__ == "__main__":
    main()
