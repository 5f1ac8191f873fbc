#!/usr/bin/env python3
"""Drives nmtzoo-serve's web page in headless Chromium (selenium + chromedriver, Debian's).

  tests/serve/browser_test.py --port P --text-file IN --expect-file OUT --screenshot PNG

Types IN's text into the box, clicks Translate, waits for the result, and checks what the DOM
shows: the translation equals OUT's text, each sentence has an n-best list and an attention heatmap (SVG).
Exit status 0 when everything holds, 1 with the reason otherwise; 77 when selenium or Chromium
is missing (the caller decides whether that may skip).
"""
import argparse
import sys

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError as e:
    print(f"selenium is missing: {e}", file=sys.stderr)
    sys.exit(77)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--text-file", required=True)
    parser.add_argument("--expect-file", required=True)
    parser.add_argument("--screenshot", required=True)
    args = parser.parse_args()
    with open(args.text_file, encoding="utf-8") as f:
        args.text = f.read()
    with open(args.expect_file, encoding="utf-8") as f:
        args.expect = f.read()
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1200,1000"):
        options.add_argument(flag)
    try:
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    except Exception as e:  # selenium wraps a missing binary in several exception types
        print(f"cannot start Chromium: {e}", file=sys.stderr)
        sys.exit(77)
    try:
        driver.get(f"http://127.0.0.1:{args.port}/")
        wait = WebDriverWait(driver, 60)
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#model option")) > 0)
        box = driver.find_element(By.ID, "source")
        box.clear()
        box.send_keys(args.text)
        driver.find_element(By.ID, "translate").click()
        wait.until(expected_conditions.text_to_be_present_in_element((By.ID, "status"), "done"))
        translation = driver.find_element(By.ID, "translation").text
        sentences = driver.find_elements(By.CSS_SELECTOR, "#details .sentence")
        nbest = driver.find_elements(By.CSS_SELECTOR, "#details .sentence:first-child .nbest li")
        heatmaps = driver.find_elements(By.CSS_SELECTOR, "#details .heatmap svg")
        driver.save_screenshot(args.screenshot)
        problems = []
        def normalize(text):  # the DOM's innerText trims and folds spaces
            return [" ".join(line.split()) for line in text.split("\n")]
        if normalize(translation) != normalize(args.expect):
            problems.append(f"the page shows {translation!r}, expected {args.expect!r}")
        lines = args.text.count("\n") + 1
        if len(sentences) != lines:
            problems.append(f"{len(sentences)} sentence sections for {lines} lines")
        if len(nbest) < 2:
            problems.append(f"the first sentence's n-best list has {len(nbest)} entries")
        if len(heatmaps) != lines:
            problems.append(f"{len(heatmaps)} attention heatmaps for {lines} lines")
        if problems:
            print("; ".join(problems), file=sys.stderr)
            sys.exit(1)
        print(f"browser: {translation!r}, {len(nbest)} hypotheses, {len(heatmaps)} heatmaps")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
