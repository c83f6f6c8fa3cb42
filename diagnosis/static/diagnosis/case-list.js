/* The case list (templates/admin/caselibrary/caselibrary/change_list.html), run after it. */
// An inline field is named after its column, as its header reads it (in the page's
// language): its tooltip below holds its value, and a tooltip alone would name it.
function nameAfterColumn(field, column) {
  const header = document.querySelector(`#result_list thead th.column-${column}`);
  const text = header && (header.querySelector(".text") || header);
  const label = text && text.textContent.trim();
  if (label) field.setAttribute("aria-label", label);
}
// The whole title of a case cut to three lines, and the whole error code an input is too
// narrow for, in a tooltip.
for (const link of document.querySelectorAll("#result_list th.field-title a")) {
  link.title = link.textContent;
}
for (const input of document.querySelectorAll("#result_list td.field-error_code input")) {
  nameAfterColumn(input, "error_code");
  input.title = input.value;
  input.addEventListener("input", () => { input.title = input.value; });
}
// The chosen category's code and whole name, should its select cut the name short: each
// option names its category, its code in the option's tooltip.
for (const select of document.querySelectorAll("#result_list td.field-fault_category select")) {
  nameAfterColumn(select, "fault_category");
  const name = () => {
    const option = select.selectedOptions[0];
    if (option) select.title = option.title ? `${option.title} · ${option.text}` : option.text;
  };
  name();
  select.addEventListener("change", name);
}
