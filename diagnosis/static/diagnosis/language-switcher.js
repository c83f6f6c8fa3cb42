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
  window.addEventListener("pageshow", () => { leaving = false; });
  window.addEventListener("beforeunload", event => {
    if (leaving || !unsaved()) return;
    event.preventDefault();
    event.returnValue = "";
  });
  // Listened for on the document, from before the switcher is parsed: a choice made while
  // the rest of the page still loads is not missed.
  document.addEventListener("change", event => {
    const choice = event.target;
    if (choice.id !== "language-choice") return;
    if (unsaved() && !window.confirm(switchAnyway)) {
      choice.value = [...choice.options].find(option => option.defaultSelected).value;
      return;
    }
    leaving = true;
    choice.form.submit();
  });
})();
