/*
 * The console's language switcher (templates/admin/language_switcher.html).
 *
 * A language is picked by reloading the page it was picked on (the switcher's "next"),
 * which loses what was typed into the page's forms and not saved yet. A page with such
 * changes asks first (the choice goes back if the operator stays), and asks too, in the
 * browser's own words, before any other way of leaving it. Changed: a field no longer as
 * the page gave it (typing a value and deleting it again is no change). Not counted: the
 * switcher itself, search boxes (GET forms), and which rows are selected for an action on
 * a list.
 *
 * A choice made with the mouse switches at once. From the keyboard, the arrow keys (and
 * Home, End, Page Up, Page Down, typing a language's first letters) only move through the
 * languages, as a closed menu changes its choice as it goes (WCAG 3.2.2: no reload on
 * input): the language is switched when the operator presses Enter, or leaves the menu
 * with a language other than the page's chosen. Escape takes the menu back to the page's
 * language.
 *
 * Loaded without defer or async, before the switcher: the parser runs it before it reads
 * the switcher, so a choice made while the rest of the page still loads is not missed.
 * The question comes in the script element's data-switch-anyway, in the page's language.
 */
(() => {
  const switchAnyway = document.currentScript.dataset.switchAnyway;
  let leaving = false;
  const changed = field => {
    if (!field.name || field.disabled || field.type === "hidden") return false;
    if (field.closest(".actions") || field.name === "_selected_action") return false;
    if (field.type === "checkbox" || field.type === "radio") return field.checked !== field.defaultChecked;
    if (field.tagName === "SELECT") return [...field.options].some(option => option.selected !== option.defaultSelected);
    if (field.tagName === "TEXTAREA" || field.tagName === "INPUT") return field.value !== field.defaultValue;
    return false;
  };
  const unsaved = () => [...document.forms].some(form =>
    form.id !== "language-switcher" && form.method === "post" && [...form.elements].some(changed));
  document.addEventListener("submit", event => { leaving = !event.defaultPrevented; });
  window.addEventListener("beforeunload", event => {
    if (leaving || !unsaved()) return;
    event.preventDefault();
    event.returnValue = "";
  });
  // The keys that move a closed menu's choice without confirming it: the arrows (with
  // Alt they open the menu's list instead), Home, End, the pages and typing a name.
  const moves = event => !event.ctrlKey && !event.metaKey && !event.altKey && (
    ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"]
      .includes(event.key) || (event.key.length === 1 && event.key !== " "));
  const pagesLanguage = choice => [...choice.options].find(option => option.defaultSelected).value;
  // The last choice came from a key that only moves through the languages.
  let moving = false;
  // The question is on screen: the menu losing the focus to it is no second choice.
  let asking = false;
  const switchTo = choice => {
    if (leaving || asking || choice.value === pagesLanguage(choice)) return;
    asking = true;
    const anyway = !unsaved() || window.confirm(switchAnyway);
    asking = false;
    if (!anyway) {
      choice.value = pagesLanguage(choice);
      return;
    }
    leaving = true;
    choice.form.submit();
  };
  // A page the browser keeps and shows again (Back after a switch) has the menu on the
  // language it was left for: back to the page's own, or leaving the menu would switch.
  window.addEventListener("pageshow", event => {
    leaving = false;
    const choice = document.getElementById("language-choice");
    if (event.persisted && choice) choice.value = pagesLanguage(choice);
  });
  const isChoice = target => target.id === "language-choice";
  // Listened for on the document, from before the switcher is parsed: a choice made while
  // the rest of the page still loads is not missed.
  document.addEventListener("keydown", event => {
    if (!isChoice(event.target)) return;
    const choice = event.target;
    moving = moves(event);
    if (event.key === "Enter" && choice.value !== pagesLanguage(choice)) {
      event.preventDefault();
      switchTo(choice);
    } else if (event.key === "Escape") {
      choice.value = pagesLanguage(choice);
    }
  });
  document.addEventListener("pointerdown", event => {
    if (isChoice(event.target)) moving = false;
  });
  document.addEventListener("change", event => {
    if (isChoice(event.target) && !moving) switchTo(event.target);
  });
  document.addEventListener("focusout", event => {
    if (!isChoice(event.target)) return;
    moving = false;
    switchTo(event.target);
  });
})();
