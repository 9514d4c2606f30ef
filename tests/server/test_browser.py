"""The web explorer in a real browser (Debian's chromium, headless, driven by chromedriver
through selenium): load the page, paste a FEN and see its value, click a move and see the new
position and its value, a bad FEN shows an error and leaves a working page. A screenshot of the
page goes to $DTB_SCREENSHOT_DIR (the build tree) for people to look at."""
import json
import os
import shutil
import tempfile

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait


def find(name, *paths):
    for p in paths:
        if os.access(p, os.X_OK):
            return p
    found = shutil.which(name)
    if not found:
        pytest.fail(f"{name} is needed for the browser test (scripts/setup.sh installs it)")
    return found


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = find("chromium", "/usr/bin/chromium")
    profile = tempfile.mkdtemp(prefix="dtb_chromium_")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1200,900",
                 f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(find("chromedriver", "/usr/bin/chromedriver")),
                              options=options)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def wait_text(driver, element_id, predicate, timeout=10):
    def check(d):
        text = d.find_element(By.ID, element_id).text
        return text if predicate(text) else False
    return WebDriverWait(driver, timeout).until(check)


def set_fen(driver, fen):
    box = driver.find_element(By.ID, "fen")
    box.clear()
    box.send_keys(fen)
    driver.find_element(By.CSS_SELECTOR, "#fenform button").click()


def test_page(server, browser):
    d = browser
    d.get(server.url)
    WebDriverWait(d, 10).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#board svg")))
    # The variants of the tables are offered.
    options = [o.get_attribute("value") for o in d.find_elements(By.CSS_SELECTOR, "#variant option")]
    assert sorted(options) == ["english", "international", "russian"]

    # A pasted FEN: KKvK, white to move wins; the value is shown large with its DTW.
    set_fen(d, "W:WK46,K47:BK5")
    value = wait_text(d, "value", lambda t: t == "White wins")
    assert value == "White wins"
    assert "in 3 plies" in d.find_element(By.ID, "dtw").text
    assert "W:WK46,K47:BK5" in d.current_url.replace("%3A", ":").replace("%2C", ",")
    kings = d.find_elements(By.CSS_SELECTOR, "#board circle.wp")
    assert len(kings) == 2 and len(d.find_elements(By.CSS_SELECTOR, "#board circle.bp")) == 1
    rows = d.find_elements(By.CSS_SELECTOR, "#moves tbody tr")
    assert rows and all(r.get_attribute("class") == "win" for r in rows[:1])

    # Clicking a move plays it: black to move, lost.
    first = rows[0]
    move = first.get_attribute("data-move")
    first.click()
    wait_text(d, "value", lambda t: t == "White wins" and "black to move" in
              d.find_element(By.ID, "dtw").text)
    assert d.find_element(By.ID, "side").text == "black to move"
    assert "in 2 plies" in d.find_element(By.ID, "dtw").text
    to = int(move.split("-")[-1])
    assert d.find_element(By.CSS_SELECTOR, f'#board circle[data-square="{to}"]').get_attribute(
        "data-piece") == "wk"
    # Back returns to the position before the move.
    d.find_element(By.ID, "back").click()
    wait_text(d, "dtw", lambda t: "white to move" in t)

    # Set up by clicking: a black king placed next to white's gives another position.
    d.find_element(By.CSS_SELECTOR, '#palette button[data-piece="bk"]').click()
    d.find_element(By.CSS_SELECTOR, '#board rect[data-square="50"]').click()
    wait_text(d, "value", lambda t: t in ("White wins", "Black wins", "Draw"))
    assert d.find_element(By.CSS_SELECTOR, '#board circle[data-square="50"]').get_attribute(
        "data-piece") == "bk"

    # A bad FEN: an error, the board still there, and the page still works afterwards.
    set_fen(d, "W:W99:B1")
    error = wait_text(d, "error", lambda t: "bad FEN" in t)
    assert "out of range" in error
    assert d.find_elements(By.CSS_SELECTOR, "#board svg")
    set_fen(d, "W:WK47:BK4")
    wait_text(d, "value", lambda t: t == "Draw")
    assert not d.find_element(By.ID, "error").is_displayed()

    # Russian: squares and moves shown and read algebraically (c1 = 30, h8 = 4).
    Select(d.find_element(By.ID, "variant")).select_by_value("russian")
    WebDriverWait(d, 10).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#board rect")) == 64)
    set_fen(d, "W:WKc1:BKh8")
    wait_text(d, "value", lambda t: t in ("White wins", "Black wins", "Draw"))
    assert d.find_element(By.CSS_SELECTOR, '#board circle[data-square="30"]').get_attribute(
        "data-piece") == "wk"
    assert d.find_element(By.CSS_SELECTOR, '#board circle[data-square="4"]').get_attribute(
        "data-piece") == "bk"
    assert d.find_element(By.ID, "fen").get_attribute("value") == "W:WKc1:BKh8"
    moves = [r.get_attribute("data-move") for r in d.find_elements(By.CSS_SELECTOR, "#moves tbody tr")]
    shown = [r.find_element(By.TAG_NAME, "td").text for r in d.find_elements(By.CSS_SELECTOR, "#moves tbody tr")]
    # The page shows the API's own texts (algebraic for russian), in its order.
    _, _, body = server.get("/api/russian?fen=W%3AWKc1%3ABKh8")
    api = json.loads(body)
    assert moves == shown == [m["move"] for m in api["moves"]]
    assert all(t.startswith("c1-") for t in shown), shown
    assert d.find_element(By.ID, "line").text == " ".join(api["line"])
    labels = [t.text for t in d.find_elements(By.CSS_SELECTOR, "#board text.num")]
    assert "a1" in labels and "h8" in labels and "29" not in labels
    # Playing a move follows the API's FEN: the king lands on the square the move names.
    first = d.find_elements(By.CSS_SELECTOR, "#moves tbody tr")[0]
    first.click()
    wait_text(d, "side", lambda t: t == "black to move")
    to = api["moves"][0]["move"].split("-")[-1]
    to_square = 1 + [n for n in json.loads(server.get("/api/variants")[2])["variants"]
                     if n["name"] == "russian"][0]["names"].index(to)
    assert d.find_element(By.CSS_SELECTOR, f'#board circle[data-square="{to_square}"]').get_attribute(
        "data-piece") == "wk"
    assert d.find_element(By.ID, "fen").get_attribute("value") == api["moves"][0]["fen"]
    shots = os.environ.get("DTB_SCREENSHOT_DIR")
    if shots:
        os.makedirs(shots, exist_ok=True)
        d.save_screenshot(os.path.join(shots, "dtb_explorer_russian.png"))
    set_fen(d, "W:WKc1:BKi9")
    assert "'i9'" in wait_text(d, "error", lambda t: "bad FEN" in t)
    set_fen(d, "W:WKc1:BKa8")  # a light square
    assert "'a8'" in wait_text(d, "error", lambda t: "a8" in t)
    Select(d.find_element(By.ID, "variant")).select_by_value("international")

    # A shared address opens the same position.
    d.get(server.url + "?variant=international&fen=W%3AWK46%2CK47%3ABK5")
    wait_text(d, "value", lambda t: t == "White wins")
    shots = os.environ.get("DTB_SCREENSHOT_DIR")
    if shots:
        os.makedirs(shots, exist_ok=True)
        d.save_screenshot(os.path.join(shots, "dtb_explorer.png"))
