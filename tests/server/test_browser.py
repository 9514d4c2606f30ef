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
from selenium.webdriver.common.action_chains import ActionChains
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
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


def wait_piece(driver, square, piece, timeout=10):
    """Waits until the board shows piece on square (fails after timeout): a redraw replaces the
    board's elements, so one found a moment before may be stale when it is read."""
    WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: d.find_element(By.CSS_SELECTOR, f'#board circle[data-square="{square}"]')
        .get_attribute("data-piece") == piece)


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
    rows = d.find_elements(By.CSS_SELECTOR, "#moves tr[data-move]")
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
    wait_piece(d, to, "wk")
    # Back returns to the position before the move.
    d.find_element(By.ID, "back").click()
    wait_text(d, "dtw", lambda t: "white to move" in t)

    # Set up by clicking: a black king placed next to white's gives another position.
    d.find_element(By.CSS_SELECTOR, '#palette button[data-piece="bk"]').click()
    d.find_element(By.CSS_SELECTOR, '#board rect[data-square="50"]').click()
    wait_text(d, "value", lambda t: t in ("White wins", "Black wins", "Draw"))
    wait_piece(d, 50, "bk")

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
    wait_piece(d, 30, "wk")
    wait_piece(d, 4, "bk")
    assert d.find_element(By.ID, "fen").get_attribute("value") == "W:WKc1:BKh8"
    moves = [r.get_attribute("data-move") for r in d.find_elements(By.CSS_SELECTOR, "#moves tr[data-move]")]
    shown = [r.find_element(By.TAG_NAME, "td").text for r in d.find_elements(By.CSS_SELECTOR, "#moves tr[data-move]")]
    # The page shows the API's own texts (algebraic for russian), in its order.
    _, _, body = server.get("/api/russian?fen=W%3AWKc1%3ABKh8")
    api = json.loads(body)
    assert moves == shown == [m["move"] for m in api["moves"]]
    assert all(t.startswith("c1-") for t in shown), shown
    assert [b.text for b in d.find_elements(By.CSS_SELECTOR, "#line .ply")] == api["line"]
    labels = [t.text for t in d.find_elements(By.CSS_SELECTOR, "#board text.num")]
    assert "a1" in labels and "h8" in labels and "29" not in labels
    # Playing a move follows the API's FEN: the king lands on the square the move names.
    first = d.find_elements(By.CSS_SELECTOR, "#moves tr[data-move]")[0]
    first.click()
    wait_text(d, "side", lambda t: t == "black to move")
    to = api["moves"][0]["move"].split("-")[-1]
    to_square = 1 + [n for n in json.loads(server.get("/api/variants")[2])["variants"]
                     if n["name"] == "russian"][0]["names"].index(to)
    wait_piece(d, to_square, "wk")
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


# ---- playing and reading the page as a player does ------------------------------------------


def open_fen(driver, server, variant, fen):
    driver.get(server.url + "?variant=" + variant + "&fen=" + fen.replace(":", "%3A").replace(",", "%2C"))
    return wait_text(driver, "value", lambda t: t in ("White wins", "Black wins", "Draw"))


def piece_on(driver, square):
    found = driver.find_elements(By.CSS_SELECTOR, f'#board circle[data-square="{square}"]')
    return found[0].get_attribute("data-piece") if found else None


def side(driver):
    return driver.find_element(By.ID, "side").text


def test_play_by_clicking_and_dragging(server, browser):
    d = browser
    open_fen(d, server, "international", "W:WK46,K47:BK5")
    # A click on a piece of the side to move marks it and its targets; a click on a target plays.
    d.find_element(By.CSS_SELECTOR, '#board circle[data-square="47"]').click()
    assert d.find_element(By.CSS_SELECTOR, '#board rect[data-square="47"]').get_attribute("class") == "selected"
    targets = {int(r.get_attribute("data-square")) for r in d.find_elements(By.CSS_SELECTOR, "#board rect.target")}
    assert targets == {41, 36, 42, 38, 33, 29, 24, 20, 15}
    d.find_element(By.CSS_SELECTOR, '#board rect[data-square="41"]').click()
    wait_text(d, "side", lambda t: t == "black to move")
    assert piece_on(d, 41) == "wk" and piece_on(d, 47) is None
    # A click on a square that is no target plays nothing (black's king on 5: 4 is not its move).
    d.find_element(By.CSS_SELECTOR, '#board circle[data-square="5"]').click()
    d.find_element(By.CSS_SELECTOR, '#board rect[data-square="4"]').click()
    assert side(d) == "black to move" and piece_on(d, 5) == "bk"
    # Dragging: black's king from 5 to 10.
    ActionChains(d).drag_and_drop(d.find_element(By.CSS_SELECTOR, '#board circle[data-square="5"]'),
                                  d.find_element(By.CSS_SELECTOR, '#board rect[data-square="10"]')).perform()
    wait_text(d, "side", lambda t: t == "white to move")
    assert piece_on(d, 10) == "bk" and piece_on(d, 5) is None


def test_flip_and_keys(server, browser):
    d = browser
    open_fen(d, server, "international", "W:WK46,K47:BK5")
    y = lambda sq: float(d.find_element(By.CSS_SELECTOR, f'#board rect[data-square="{sq}"]').get_attribute("y"))
    assert y(1) == 0 and y(50) == 450
    d.find_element(By.ID, "flip").click()
    assert y(1) == 450 and y(50) == 0
    body = d.find_element(By.TAG_NAME, "body")
    body.send_keys("f")
    assert y(1) == 0
    # → plays the best move, ← takes it back.
    body.send_keys(Keys.ARROW_RIGHT)
    wait_text(d, "side", lambda t: t == "black to move")
    assert piece_on(d, 41) == "wk"
    body.send_keys(Keys.ARROW_RIGHT)
    wait_text(d, "side", lambda t: t == "white to move")
    body.send_keys(Keys.ARROW_LEFT)
    wait_text(d, "side", lambda t: t == "black to move")
    body.send_keys(Keys.ARROW_LEFT)
    wait_text(d, "side", lambda t: t == "white to move")
    assert piece_on(d, 47) == "wk" and d.find_element(By.ID, "back").get_attribute("disabled")


def test_numbered_line_and_copy(server, browser):
    d = browser
    open_fen(d, server, "international", "W:WK46,K47:BK5")
    assert d.find_element(By.ID, "line").text.split() == ["1.", "47-41", "5-10", "2.", "41x5"]
    open_fen(d, server, "international", "B:WK41,K46:BK5")
    assert d.find_element(By.ID, "line").text.split() == ["1...", "5-10", "2.", "41x5"]
    d.find_element(By.ID, "copyfen").click()
    WebDriverWait(d, 5).until(lambda d: d.find_element(By.ID, "copyfen").get_attribute("data-copied"))
    assert d.find_element(By.ID, "copyfen").get_attribute("data-copied") == "B:WK41,K46:BK5"
    d.find_element(By.ID, "copyline").click()
    WebDriverWait(d, 5).until(lambda d: d.find_element(By.ID, "copyline").get_attribute("data-copied"))
    assert d.find_element(By.ID, "copyline").get_attribute("data-copied") == "1... 5-10 2. 41x5"
    # A move of the line plays the line up to it: here to the end of the game.
    d.find_elements(By.CSS_SELECTOR, "#line .ply")[1].click()
    wait_text(d, "dtw", lambda t: "game is over" in t)
    assert piece_on(d, 5) == "wk" and d.find_element(By.ID, "forward").get_attribute("disabled")


def test_colours_follow_the_player(server, browser):
    """Black to move and lost: the headline names White the winner in White's colours, not in
    the red of black's loss; the moves are grouped and coloured for Black, the mover."""
    d = browser
    assert open_fen(d, server, "international", "B:WK46:BK5") == "White wins"
    value = d.find_element(By.ID, "value")
    assert value.get_attribute("class") == "white"
    red = "rgb(180, 35, 24)"
    assert value.value_of_css_property("color") != red.replace("rgb", "rgba").replace(")", ", 1)")
    assert value.value_of_css_property("color") not in (red, "rgba(180, 35, 24, 1)")
    dtw = d.find_element(By.ID, "dtw")
    assert dtw.text.startswith("black to move loses") and dtw.get_attribute("class") == "loss"
    groups = [g.text for g in d.find_elements(By.CSS_SELECTOR, "#moves tr.group")]
    assert groups and all("for Black" in g for g in groups if "drawing" not in g), groups
    rows = d.find_elements(By.CSS_SELECTOR, "#moves tr[data-move]")
    assert rows and {r.get_attribute("class") for r in rows} <= {"loss", "draw"}
    # A drawn position: ▶ has nothing to follow.
    assert open_fen(d, server, "international", "W:WK47:BK4") == "Draw"
    assert d.find_element(By.ID, "forward").get_attribute("disabled")
    # Only captures: the page says captures are compulsory.
    open_fen(d, server, "international", "W:W28:B23,K5")
    note = d.find_element(By.ID, "note")
    assert note.is_displayed() and "compulsory" in note.text
    open_fen(d, server, "international", "W:WK46,K47:BK5")
    assert not d.find_element(By.ID, "note").is_displayed()
    # Russian captures as russian players write them: every landing square.
    open_fen(d, server, "russian", "W:Wc5:Bd6,f6,Kh8")
    assert [r.get_attribute("data-move") for r in d.find_elements(By.CSS_SELECTOR, "#moves tr[data-move]")] == ["c5:e7:g5"]
    assert d.find_element(By.ID, "note").is_displayed()


def test_no_stale_board_under_an_error(server, browser):
    d = browser
    open_fen(d, server, "international", "W:WK46,K47:BK5")
    set_fen(d, "W:W99:B1")
    wait_text(d, "error", lambda t: "bad FEN" in t)
    assert not d.find_elements(By.CSS_SELECTOR, "#board circle")
    assert d.find_element(By.ID, "fen").get_attribute("value") == "W:W99:B1"
    assert d.find_element(By.ID, "value").text == ""
    # The same from the address: the text as given, an error, no board.
    d.get(server.url + "?variant=international&fen=bad")
    error = wait_text(d, "error", lambda t: "bad FEN" in t)
    assert d.find_element(By.ID, "fen").get_attribute("value") == "bad"
    assert not d.find_elements(By.CSS_SELECTOR, "#board circle")
    d.get(server.url + "?variant=nosuch&fen=W%3AWK46%3ABK5")
    error = wait_text(d, "error", lambda t: "nosuch" in t)
    assert "international" in error and not d.find_elements(By.CSS_SELECTOR, "#board circle")


def test_screenshots_wide_and_narrow(server, browser):
    """The page at 1200 and 400 px (files for people to look at), and never a sideways scroll."""
    d = browser
    shots = os.environ.get("DTB_SCREENSHOT_DIR")
    try:
        for width in (1200, 400):
            d.set_window_size(width, 1000)
            open_fen(d, server, "international", "B:WK41,K46:BK5")
            d.find_element(By.CSS_SELECTOR, '#board circle[data-square="5"]').click()
            assert d.execute_script("return document.documentElement.scrollWidth") <= \
                d.execute_script("return window.innerWidth"), width
            if shots:
                os.makedirs(shots, exist_ok=True)
                d.save_screenshot(os.path.join(shots, f"dtb_explorer_{width}.png"))
    finally:
        d.set_window_size(1200, 900)


def test_material_page(server, browser):
    """The page of a table: its counts and longest win from STATS, the list of the server's
    materials, reached from the explorer and linkable."""
    d = browser
    open_fen(d, server, "international", "W:WK46,K47:BK5")
    link = d.find_element(By.ID, "materiallink")
    assert link.text.startswith("KKvK")
    link.click()
    WebDriverWait(d, 10).until(lambda d: d.find_element(By.ID, "detail").is_displayed())
    assert "material=KKvK" in d.current_url
    _, _, body = server.get("/api/international/materials")
    stats = {m["material"]: m for m in json.loads(body)["materials"]}
    kkvk = stats["KKvK"]
    detail = d.find_element(By.ID, "detail").text
    assert f"{kkvk['positions']:,} positions" in detail and f"{kkvk['wins']:,} wins" in detail
    assert f"Longest win: {kkvk['longest_win']} plies" in detail and kkvk["longest_win_fen"] in detail
    rows = d.find_elements(By.CSS_SELECTOR, "#materials tr[data-material]")
    assert {r.get_attribute("data-material") for r in rows} == set(stats)
    assert d.find_element(By.CSS_SELECTOR, "#materials tr.chosen").get_attribute("data-material") == "KKvK"
    shots = os.environ.get("DTB_SCREENSHOT_DIR")
    if shots:
        os.makedirs(shots, exist_ok=True)
        d.save_screenshot(os.path.join(shots, "dtb_material.png"))
    # Its longest win opens in the explorer, a win in exactly that many plies.
    d.find_element(By.CSS_SELECTOR, "#detail a").click()
    wait_text(d, "dtw", lambda t: f"wins in {kkvk['longest_win']} plies" in t)
    # Another variant's list, from the address.
    d.get(server.url + "material.html?variant=russian")
    WebDriverWait(d, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#materials tr[data-material]"))
    assert d.find_element(By.ID, "variant").get_attribute("value") == "russian"
    d.get(server.url + "material.html?variant=nosuch")
    wait_text(d, "error", lambda t: "nosuch" in t)


def test_claims_report_reads_on_a_phone(dtbprobe, tables, browser, tmp_path):
    """dtbprobe verify's HTML report: the summary and contents on the first screen, failing and
    holding claims before those not checked, no sideways scroll at 400 px."""
    import subprocess
    claims = os.path.join(os.path.dirname(__file__), "..", "..", "tables", "claims")
    files = sorted(os.path.join(claims, f) for f in os.listdir(claims) if f.endswith(".claims"))
    report = tmp_path / "claims.html"
    r = subprocess.run([dtbprobe, "verify", "--tables", tables, "--skip-absent", "--quiet",
                        "--html", str(report)] + files, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    d = browser
    try:
        d.set_window_size(400, 900)
        d.get(report.as_uri())
        summary = d.find_element(By.CSS_SELECTOR, ".summary")
        assert summary.location["y"] < 600 and "not checked" in summary.text
        assert d.find_element(By.TAG_NAME, "nav").location["y"] < 900
        verdicts = [s.get_attribute("class").split()[-1] for s in
                    d.find_elements(By.CSS_SELECTOR, "section.claim h2 .verdict")]
        assert verdicts and "absent" in verdicts
        first_absent = verdicts.index("absent")
        assert all(v == "absent" for v in verdicts[first_absent:]), verdicts
        assert d.execute_script("return document.documentElement.scrollWidth") <= \
            d.execute_script("return window.innerWidth")
        shots = os.environ.get("DTB_SCREENSHOT_DIR")
        if shots:
            os.makedirs(shots, exist_ok=True)
            d.save_screenshot(os.path.join(shots, "dtb_claims_400.png"))
    finally:
        d.set_window_size(1200, 900)


@pytest.fixture(scope="module")
def rule_server(dtbprobe):
    """A server of international KKvK (and the 2-piece materials) with rule tables, the FMJD
    limits lowered to 6,6,4 plies: W:WK46,K47:BK5 wins in 3 plies, cursed at clock 2."""
    import subprocess
    from conftest import program, start_server
    with tempfile.TemporaryDirectory(prefix="dtb_browser_rules_") as d:
        subprocess.run([program("DTB_DTBGEN"), "--variant", "international", "--pieces", "3",
                        "--material", "KKvK", "--material", "MvK", "--material", "MvM",
                        "--out", d, "--quiet", "--threads", "2", "--metrics", "wld,dtw,rules",
                        "--rule-limits", "6,6,4"], check=True)
        s = start_server(dtbprobe, d)
        yield s
        s.process.terminate()
        s.process.wait(timeout=10)


def test_rules_beside_the_value(rule_server, browser):
    d = browser
    d.get(rule_server.url)
    WebDriverWait(d, 10).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#board svg")))
    # The FEN's H field sets the clock; the rule status stands beside the unlimited value.
    set_fen(d, "W:WK46,K47:BK5:H2")
    wait_text(d, "rules", lambda t: t.startswith("Cursed win \u2014 won in unlimited play, "
                                                 "drawn by the 5-move rule (fmjd, clock 2 of 4)"))
    assert d.find_element(By.ID, "value").text == "White wins"
    assert d.find_element(By.ID, "clock").get_attribute("value") == "2"
    heads = [h.text for h in d.find_elements(By.CSS_SELECTOR, "#rulemoves tr.group")]
    assert heads == ["9 moves: cursed win", "8 moves: draw"], heads
    # The clock is settable: at 0 the same position is a win under the rules.
    box = d.find_element(By.ID, "clock")
    box.clear()
    box.send_keys("0", Keys.TAB)
    wait_text(d, "rules", lambda t: t.startswith("Win \u2014"))
    # A move played from the rules' list carries its clock after it.
    d.find_element(By.CSS_SELECTOR, "#rulemoves tr[data-move]").click()
    wait_text(d, "rules", lambda t: t.startswith("Loss \u2014") and "clock 1 of 4" in t)
    assert d.find_element(By.ID, "clock").get_attribute("value") == "1"
